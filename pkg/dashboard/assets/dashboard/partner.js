  // --- a partner's page ----------------------------------------------------------------------------
  //
  // One partner of the program on one page (#program=<id>&view=partner&partner=<id>), reached from their
  // name in Partners and Customers: who they are and how far their enrollment went, the program's terms
  // they earn by, their money per currency, their links (with Copy), and their latest commissions, payouts
  // and customers. The navigation marks Partners.

  var PARTNER_PAGE_ROWS = 10;

  function partnerAddress(id) { return "#program=" + state.program.id + "&view=partner&partner=" + id; }

  // partnerLink is a partner's name as a link to their page.
  function partnerLink(id, name) { return el("a", { href: partnerAddress(id), "class": "partner-link" }, name); }

  function resetPartnerPage() {
    ["pp-profile", "pp-terms"].forEach(function (id) { $(id).textContent = ""; });
    ["pp-balances", "pp-links", "pp-commissions", "pp-payouts", "pp-customers"].forEach(function (id) {
      document.querySelector("#" + id + " tbody").textContent = "";
    });
    $("partner-panel").removeAttribute("data-partner");
  }

  // refreshPartnerPage reads the partner's page (nothing when no partner is named).
  function refreshPartnerPage(listed) {
    var pid = state.partner;
    if (!pid) return Promise.resolve();
    var by = "?partner_id=" + pid + "&limit=" + PARTNER_PAGE_ROWS;
    $("pp-back").href = address("partners");
    $("pp-all-commissions").href = address("commissions");
    return Promise.all([
      listed || programPartners(), api("GET", programPath("")), api("GET", programPath("/links")), api("GET", programPath("/balances")),
      api("GET", programPath("/commissions") + by), api("GET", programPath("/payouts") + by), api("GET", programPath("/customers") + by)
    ]).then(function (r) {
      if (state.partner !== pid) return;
      var p = r[0].data.filter(function (x) { return x.id === pid; })[0];
      $("pp-missing").hidden = !!p;
      $("pp-body").hidden = !p;
      if (!p) {
        $("pp-name").textContent = "Partner not found";
        return;
      }
      $("partner-panel").setAttribute("data-partner", pid);
      $("pp-name").textContent = p.name;
      var facts = $("pp-profile");
      facts.textContent = "";
      [["Email", p.email], ["Enrollment", label("PartnerStatus", p.status) + (p.status_reason ? " (" + p.status_reason + ")" : "")],
        ["Partner since", fmtTime(p.created_at).slice(0, 10)],
        ["Events", plural(p.stats.clicks, "click", "clicks") + ", " + plural(p.stats.leads, "lead", "leads") + ", " + plural(p.stats.sales, "sale", "sales")]
      ].forEach(function (f) {
        facts.appendChild(el("dt", {}, f[0]));
        facts.appendChild(el("dd", {}, f[1]));
      });
      $("pp-terms").textContent = r[1].data.terms;
      fillRows("pp-balances", r[3].data.filter(function (b) { return b.partner_id === pid; }), 6, "No money yet: it starts with the first commission.",
        function (b) {
          return [b.currency, money(b.pending_cents, b.currency), money(b.approved_cents, b.currency), money(b.in_payout_cents, b.currency),
            money(b.paid_cents, b.currency), money(b.clawback_owed_cents, b.currency)];
        });
      fillRows("pp-links", r[2].data.filter(function (l) { return l.partner_id === pid; }), 3, "No links: create one under Links.", function (l) {
        var url = el("span", {});
        url.appendChild(el("span", { "class": "url" }, l.referral_url));
        url.appendChild(document.createTextNode(" "));
        url.appendChild(el("button", { type: "button", "class": "copy", "data-text": l.referral_url, "aria-label": "Copy the referral URL of link " + l.short_link }, "Copy"));
        return [l.short_link, url, l.enabled ? "on" : "off"];
      });
      fillRows("pp-commissions", r[4].data, 4, "No commissions yet.", function (c) {
        return [fmtTime(c.created_at), c.transaction_id, money(c.payable_cents, c.currency), label("CommissionStatus", c.status)];
      });
      fillRows("pp-payouts", r[5].data, 4, "No payouts yet.", function (o) {
        return [fmtTime(o.created_at), money(o.amount_cents, o.currency), label("PayoutStatus", o.status), o.external_reference || o.failure_reason || ""];
      });
      fillRows("pp-customers", r[6].data, 4, "No customers yet.", function (c) {
        return [c.customer_key || "no key (a browser lead)", label("CustomerStatus", c.status), c.first_sale_at ? fmtTime(c.first_sale_at) : "none",
          c.money.map(function (m) { return money(m.revenue_cents, m.currency); }).join(", ") || "none"];
      });
    });
  }

  // fillRows fills a table's body with a row of cells per item (text, or an element), or says it has none;
  // a cell under a numeric heading (th.num) is aligned as its heading.
  function fillRows(table, items, columns, none, cells) {
    var body = document.querySelector("#" + table + " tbody");
    var num = Array.prototype.map.call(document.querySelectorAll("#" + table + " thead th"), function (th) { return th.classList.contains("num"); });
    body.textContent = "";
    items.forEach(function (x) {
      var tr = body.appendChild(el("tr", {}));
      cells(x).forEach(function (c, i) {
        var td = tr.appendChild(el("td", num[i] ? { "class": "num" } : {}));
        if (typeof c === "string") td.textContent = c;
        else td.appendChild(c);
      });
    });
    if (!items.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: columns, "class": "muted" }, none));
  }

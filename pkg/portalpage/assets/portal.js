  // The portal's state, beside the helpers it shares with the dashboard (pkg/webui).
  var LOGIN = "/partners/login";
  var state = { programs: [], program: null, days: 30, cursor: null };

  function row(tbody, cells) {
    var tr = el("tr");
    cells.forEach(function (c) {
      var td = el("td");
      if (c instanceof Node) td.appendChild(c); else td.textContent = c == null ? "" : c;
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
    return tr;
  }
  // badge is a status in the spec's words (the dashboard's), styled by its value.
  function badge(set, value) { return el("span", { "class": "badge " + value }, label(set, value)); }
  function day(iso) { return iso ? iso.slice(0, 10) : ""; }
  function count(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function base() { return "/api/v1/partner/programs/" + state.program.id; }

  function showPanels(on) {
    ["links-panel", "stats-panel", "money-panel", "details-panel"].forEach(function (id) { $(id).hidden = !on; });
  }

  function choose(id) {
    state.program = state.programs.filter(function (p) { return String(p.id) === String(id); })[0] || state.programs[0];
    $("program").value = state.program.id;
    notice("");
    var p = state.program;
    if (p.status !== "approved") {
      showPanels(false);
      var words = { invited: "Your invitation to " + p.name + " is not accepted yet: open the link in the invitation mail.",
        pending: "Your application to " + p.name + " is waiting for the brand's approval.",
        rejected: "Your application to " + p.name + " was not accepted.", banned: "You are banned from " + p.name + "." };
      $("not-approved").textContent = words[p.status] || p.status;
      $("not-approved").hidden = false;
      return;
    }
    $("not-approved").hidden = true;
    showPanels(true);
    // The terms in words come from the server: the sentence the brand's dashboard and the mails say too.
    $("program-terms").textContent = p.name + " (" + p.domain + "): " + p.terms;
    $("new-link").hidden = !p.partner_link_codes;
    $("payouts-csv").href = base() + "/payouts.csv";
    document.body.removeAttribute("data-loaded");
    Promise.all([loadLinks(), loadStats(), loadMoney(), loadDetails()]).then(function () {
      document.body.setAttribute("data-loaded", p.id); // the program's views are shown (tests wait for it)
    });
  }

  function loadLinks() {
    return api("GET", base() + "/links").then(function (res) {
      var tb = $("links").tBodies[0];
      tb.textContent = "";
      res.data.forEach(function (l) {
        var copy = el("button", { type: "button", "class": "copy", "data-text": l.referral_url, "aria-label": "Copy the link " + l.short_link }, "Copy");
        var tr = row(tb, [l.short_link, l.referral_url, l.enabled ? "on" : "off", copy]);
        tr.children[1].className = "url";
        tr.setAttribute("data-link", l.short_link);
      });
    }).catch(fail);
  }

  function loadStats() {
    return api("GET", base() + "/stats?days=" + state.days).then(function (res) {
      var totals = { clicks: 0, leads: 0, sales: 0 }, money_ = {};
      res.data.forEach(function (d) {
        totals.clicks += d.clicks; totals.leads += d.leads; totals.sales += d.sales;
        for (var c in d.commissions) money_[c] = (money_[c] || 0) + d.commissions[c];
      });
      $("stats-totals").setAttribute("data-totals", [totals.clicks, totals.leads, totals.sales].join(" "));
      var earned = Object.keys(money_).sort().map(function (c) { return money(money_[c], c); }).join(", ") || "nothing yet";
      $("stats-totals").textContent = count(totals.clicks, "click") + ", " + count(totals.leads, "lead") + ", " +
        count(totals.sales, "sale") + " in " + state.days + " days; commission " + earned + ".";
      drawChart(res.data);
    }).catch(fail);
  }

  // drawChart draws each day's clicks, leads and sales as three bars, scaled to the period's largest.
  function drawChart(days) {
    var chart = $("chart");
    chart.textContent = "";
    var max = 1;
    days.forEach(function (d) { max = Math.max(max, d.clicks, d.leads, d.sales); });
    var w = 600 / days.length, bw = Math.max(w / 4, 0.5);
    days.forEach(function (d, i) {
      [["clicks", d.clicks], ["leads", d.leads], ["sales", d.sales]].forEach(function (s, j) {
        var h = s[1] / max * 150;
        var r = svg("rect", { x: i * w + j * bw + bw / 2, y: 158 - h, width: bw, height: h, "class": s[0] });
        var t = svg("title", {});
        t.textContent = d.day + ": " + s[1] + " " + s[0];
        r.appendChild(t);
        chart.appendChild(r);
      });
    });
    chart.setAttribute("data-max", max);
  }

  function loadMoney() {
    var balances = api("GET", base() + "/balances").then(function (res) {
      var tb = $("balances").tBodies[0];
      tb.textContent = "";
      res.data.forEach(function (b) {
        row(tb, [b.currency, money(b.pending_cents, b.currency), money(b.approved_cents, b.currency),
          money(b.in_payout_cents, b.currency), money(b.paid_cents, b.currency), money(b.clawback_owed_cents, b.currency)]);
      });
    }).catch(fail);
    state.cursor = null;
    $("commissions").tBodies[0].textContent = "";
    var commissions = loadCommissions();
    var payouts = api("GET", base() + "/payouts?limit=100").then(function (res) {
      var tb = $("payouts").tBodies[0];
      tb.textContent = "";
      res.data.forEach(function (o) {
        var tr = row(tb, [String(o.id), money(o.amount_cents, o.currency), badge("PayoutStatus", o.status), o.external_reference || "",
          day(o.created_at), day(o.paid_at)]);
        tr.setAttribute("data-payout", o.id);
        tr.setAttribute("data-status", o.status);
      });
    }).catch(fail);
    return Promise.all([balances, commissions, payouts]);
  }

  function loadCommissions() {
    var path = base() + "/commissions?limit=25" + (state.cursor ? "&cursor=" + encodeURIComponent(state.cursor) : "");
    return api("GET", path).then(function (res) {
      var tb = $("commissions").tBodies[0];
      res.data.forEach(function (c) {
        var tr = row(tb, [day(c.created_at), c.customer, money(c.payable_cents, c.currency), badge("CommissionStatus", c.status), day(c.available_on)]);
        tr.setAttribute("data-commission", c.id);
        tr.setAttribute("data-status", c.status);
      });
      state.cursor = res.meta && res.meta.next_cursor;
      $("more-commissions").hidden = !state.cursor;
    }).catch(fail);
  }

  function loadDetails() {
    return api("GET", base() + "/payout-details").then(function (res) {
      var d = res.data || { method: "paypal" };
      $("details-method").value = d.method;
      $("details-paypal").value = d.paypal_email || "";
      $("details-bank").value = d.bank_details || "";
      $("details-saved").textContent = res.data ? "Saved " + day(res.data.updated_at) : "Not given yet";
      methodShown();
    }).catch(fail);
  }
  function methodShown() {
    var paypal = $("details-method").value === "paypal";
    $("paypal-field").hidden = !paypal;
    $("bank-field").hidden = paypal;
  }

  function start() {
    startCopy();
    startCards();
    $("program").addEventListener("change", function () { choose(this.value); });
    $("details-method").addEventListener("change", methodShown);
    Array.prototype.forEach.call(document.querySelectorAll(".periods button"), function (b) {
      b.addEventListener("click", function () {
        state.days = Number(b.getAttribute("data-days"));
        Array.prototype.forEach.call(document.querySelectorAll(".periods button"), function (o) {
          o.setAttribute("aria-pressed", String(o === b));
        });
        loadStats();
      });
    });
    $("more-commissions").addEventListener("click", loadCommissions);
    $("new-link").addEventListener("submit", function (e) {
      e.preventDefault();
      api("POST", base() + "/links", { code: $("link-code").value.trim() }).then(function (res) {
        notice("Your link " + res.data.referral_url + " is ready.");
        $("link-code").value = "";
        loadLinks();
      }).catch(fail);
    });
    $("details").addEventListener("submit", function (e) {
      e.preventDefault();
      var body = { method: $("details-method").value };
      if (body.method === "paypal") body.paypal_email = $("details-paypal").value.trim();
      else body.bank_details = $("details-bank").value;
      api("PUT", base() + "/payout-details", body).then(function () {
        $("details-saved").textContent = "Saved";
      }).catch(fail);
    });
    api("GET", "/api/v1/partner/me").then(function (res) {
      state.programs = res.data.programs;
      if (!state.programs.length) {
        $("empty").hidden = false;
        return;
      }
      var pick = $("program");
      state.programs.forEach(function (p) { pick.appendChild(el("option", { value: p.id }, p.name)); });
      choose(document.body.getAttribute("data-program"));
    }).catch(fail);
  }
  document.addEventListener("DOMContentLoaded", start);

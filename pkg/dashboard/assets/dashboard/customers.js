  // --- customers -----------------------------------------------------------------------------------
  //
  // The Customers view: each customer with the partner they came through, how far they went and what they
  // brought in, a page at a time (GET …/customers; the erase action comes with the fraud review).

  var customers = { filters: { status: "", partner: "" }, cursors: [""], index: 0, next: null };

  function startCustomers() {
    labelOptions($("cu-status"), "CustomerStatus");
    $("cu-filters").addEventListener("submit", function (e) {
      e.preventDefault();
      customers.filters = { status: $("cu-status").value, partner: $("cu-partner").value };
      firstPage(customers);
      refreshCustomers().catch(function (err) { panelNotice("customers", err.message, true); });
    });
    $("cu-prev").addEventListener("click", function () { turn(customers, -1, refreshCustomers, "customers"); });
    $("cu-next").addEventListener("click", function () { turn(customers, 1, refreshCustomers, "customers"); });
  }

  function resetCustomers() {
    customers.filters = { status: "", partner: "" };
    firstPage(customers);
    $("cu-filters").reset();
    panelNotice("customers", "");
  }

  // refreshCustomers shows the page read; given the program's partners (when the program loads and when
  // the view opens, not on every periodic refresh or page turn), the partner filter lists them.
  function refreshCustomers(listed) {
    var f = customers.filters;
    var q = query({ status: f.status, partner_id: f.partner, cursor: customers.cursors[customers.index], limit: LEDGER_PAGE_SIZE });
    return Promise.all([listed, latest("customers", programPath("/customers") + q)]).then(function (r) {
      var res = r[1];
      if (r[0]) partnerOptions($("cu-partner"), r[0].data);
      if (!res) return;
      customers.next = res.meta.next_cursor;
      var body = document.querySelector("#customers tbody");
      body.textContent = "";
      res.data.forEach(function (x) { body.appendChild(customerRow(x)); });
      if (!res.data.length) {
        body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 6, "class": "muted" }, f.status || f.partner
          ? "No customers match these filters." : "No customers yet: a lead or a sale referred by a partner makes one."));
      }
      pageInfo("cu-page-info", customers, res.data.length, "customer", "customers");
      $("cu-prev").disabled = customers.index === 0;
      $("cu-next").disabled = !customers.next;
    });
  }

  function customerRow(x) {
    var tr = el("tr", { "data-customer": x.id, "data-status": x.status });
    var who = tr.appendChild(el("td", {}, x.customer_key || "no key (a browser lead)"));
    if (x.is_test) who.appendChild(el("span", { "class": "muted" }, " test"));
    var by = tr.appendChild(el("td", {}, x.partner_id ? null : "none"));
    if (x.partner_id) by.appendChild(partnerLink(x.partner_id, x.partner_name));
    tr.appendChild(el("td", {}, label("CustomerStatus", x.status)));
    // Each cell holds one block of lines: on a phone a cell is a line of label and value.
    var when = tr.appendChild(el("td", {})).appendChild(el("div", { "class": "lines" }));
    [["Click", x.first_click_at], ["Signed up", x.lead_at], ["First sale", x.first_sale_at]].forEach(function (t) {
      if (!t[1]) return;
      var line = when.appendChild(el("span", {}, t[0] + " "));
      line.appendChild(el("span", { "class": "nowrap" }, fmtTime(t[1])));
    });
    var revenue = tr.appendChild(el("td", { "class": "num" })).appendChild(el("div", { "class": "lines" }));
    var earned = tr.appendChild(el("td", { "class": "num" })).appendChild(el("div", { "class": "lines" }));
    x.money.forEach(function (m) {
      revenue.appendChild(el("span", { "class": "nowrap" }, money(m.revenue_cents, m.currency)));
      earned.appendChild(el("span", { "class": "nowrap" }, money(m.commission_cents, m.currency)));
    });
    if (!x.money.length) { revenue.textContent = "none"; earned.textContent = "none"; }
    return tr;
  }

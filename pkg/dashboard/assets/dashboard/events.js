  // --- events and chart ----------------------------------------------------------------------------

  function refreshActivity() {
    var denied = !state.actions["tracking:list"];
    $("activity-denied").hidden = !denied;
    ["chart-box", "events"].forEach(function (id) { $(id).hidden = denied; });
    $("events-pager").hidden = denied;
    if (denied) {
      $("activity-denied").textContent = "Your role (" + $("role").textContent + ") does not include the events list.";
      return Promise.resolve();
    }
    return Promise.all([refreshEvents(), refreshChart()]);
  }

  function refreshEvents() {
    var f = state.filters;
    var q = query({
      page: state.page, pageSize: PAGE_SIZE, eventType: f.eventType,
      dateFrom: f.from && f.from + "T00:00:00Z", dateTo: f.to && f.to + "T23:59:59.999Z", test: f.test ? "true" : "",
    });
    return latest("events", "/api/tracking/events/" + state.program.id + q).then(function (res) {
      if (!res) return;
      var body = document.querySelector("#events tbody");
      body.textContent = "";
      res.data.forEach(function (e) {
        var tr = el("tr", { "data-type": e.event_type, "data-id": e.id });
        tr.appendChild(el("td", {}, fmtTime(e.timestamp)));
        tr.appendChild(el("td", { "class": "type type-" + e.event_type }, e.event_type === "conversion" ? "sale" : e.event_type));
        var cell = tr.appendChild(el("td", { "class": "details" }, ""));
        var label = f.test ? testLabel(e) : "";
        if (label) {
          tr.setAttribute("data-label", label);
          cell.appendChild(el("span", { "class": "badge badge-" + label }, label === "synthetic" ? "synthetic · reftrack test" : "test mode"));
          cell.appendChild(document.createTextNode(" "));
        }
        cell.appendChild(document.createTextNode(details(e, label === "synthetic")));
        tr.appendChild(el("td", {}, e.click_id || ""));
        body.appendChild(tr);
      });
      if (!res.data.length) {
        var td = el("td", { colspan: 4, "class": "muted" }, f.test ? "No test events." :
          "No events. Events from reftrack test are test data: tick Test data to see them.");
        body.appendChild(el("tr", {})).appendChild(td);
      }
      if (!f.test) annotateSales(res.data).catch(function () { /* the rows stand without it */ });
      var p = res.meta.pagination;
      $("page-info").textContent = "Page " + (p.pageCount ? p.page : 0) + " of " + p.pageCount + " · " + p.total + (p.total === 1 ? " event" : " events");
      $("prev").disabled = p.page <= 1;
      $("next").disabled = p.page >= p.pageCount;
    });
  }

  // annotateSales adds to each sale on the page who referred it and what it earned them: the events list
  // carries neither, the commissions list does (matched by transaction ID, among the commissions made
  // within a second of the page's sales). A sale without a commission says why, in the program's terms.
  function annotateSales(events) {
    var sales = events.filter(function (e) { return e.event_type === "conversion"; });
    if (!sales.length || !state.actions["commissions:read"]) return Promise.resolve();
    var times = sales.map(function (e) { return Date.parse(e.createdAt); });
    var q = query({ created_from: new Date(Math.min.apply(null, times) - 1000).toISOString(),
      created_to: new Date(Math.max.apply(null, times) + 1000).toISOString(), limit: 100 });
    var id = state.program.id;
    return Promise.all([api("GET", programPath("/commissions") + q), partners()]).then(function (r) {
      if (state.program.id !== id) return;
      var byTxn = {};
      r[0].data.forEach(function (c) { byTxn[c.transaction_id] = c; });
      sales.forEach(function (e) {
        var cell = document.querySelector('#events tr[data-type="conversion"][data-id="' + e.id + '"] td.details');
        if (!cell || cell.querySelector(".earned")) return;
        var c = byTxn[e.processor_event_id], text;
        if (c) {
          var who = r[1][c.partner_id];
          text = (who ? who.name : "partner " + c.partner_id) + " earned " + money(c.amount_cents, c.currency) + " (" + label("CommissionStatus", c.status) + ")";
        } else {
          text = noCommission();
        }
        cell.appendChild(el("span", { "class": "earned" }, " · " + text));
      });
    });
  }

  // noCommission says why a sale paid no commission, as far as the program's terms tell (the events list
  // does not say whether the sale was referred or the customer's first).
  function noCommission() {
    var p = shownProgram;
    if (!p) return "no commission";
    return p.commission_type.indexOf("recurring") === 0
      ? "no commission: not referred by a partner, or after the months this program pays for"
      : "no commission: this program pays on a customer's first referred sale only";
  }

  // testLabel tells a test event's origin (the list carries no is_test: only the test-data view asks for
  // test events): "synthetic" for what reftrack test recorded (its click's session, lead's customer key
  // or sale's transaction ID starts with the markers the server puts on <body>), "test" for other
  // test-mode events (the tracker's or the SDK's).
  function testLabel(e) {
    var m = document.body.dataset;
    var own = { click: [e.session_id, m.syntheticSession], lead: [e.customer_key, m.syntheticCustomer], conversion: [e.processor_event_id, m.syntheticTxn] }[e.event_type];
    return own && own[0] && own[1] && own[0].indexOf(own[1]) === 0 ? "synthetic" : "test";
  }

  // details sums an event up. A synthetic event's page is the fixture link on the program's domain,
  // which no visitor opened: it is not shown.
  function details(e, synthetic) {
    if (e.event_type === "conversion") {
      return money(e.amount_cents, e.currency) + (e.sale_type ? " · " + e.sale_type : "") + (e.payment_status ? " · " + e.payment_status : "");
    }
    var page = synthetic ? "" : e.page_url;
    if (e.event_type === "lead") return (e.customer_key || "") + (page ? " · " + page : "");
    return [page, e.device_type, e.browser_name, e.geo_country].filter(Boolean).join(" · ");
  }

  function refreshChart() {
    var f = state.filters;
    var q = query({ dateFrom: f.from, dateTo: f.to, test: f.test ? "true" : "" });
    return latest("chart", "/api/tracking/events/" + state.program.id + "/daily" + q).then(function (res) {
      if (res) drawChart(res.data);
    });
  }

  // drawChart draws one group of three bars per day, scaled to the busiest day.
  function drawChart(days) {
    var chart = $("chart");
    chart.textContent = "";
    var W = 760, H = 200, top = 8;
    var max = 0, totals = { clicks: 0, leads: 0, conversions: 0 };
    days.forEach(function (d) {
      SERIES.forEach(function (s) { max = Math.max(max, d[s[1]]); totals[s[1]] += d[s[1]]; });
    });
    var slot = W / Math.max(days.length, 1), bar = Math.max(1, (slot - 2) / 3);
    days.forEach(function (d, i) {
      SERIES.forEach(function (s, j) {
        var n = d[s[1]];
        if (!n) return;
        var h = Math.max(2, Math.round((H - top) * n / max));
        var r = svg("rect", { "class": "bar-" + s[0], x: (i * slot + 1 + j * bar).toFixed(1), y: H - h, width: bar.toFixed(1), height: h, "data-date": d.date, "data-series": s[0], "data-n": n });
        var t = svg("title", {});
        t.textContent = d.date + ": " + n + " " + s[2].toLowerCase();
        r.appendChild(t);
        chart.appendChild(r);
      });
    });
    var legend = $("chart-legend");
    legend.textContent = "";
    SERIES.forEach(function (s) {
      var span = el("span", { "data-series": s[0] });
      span.appendChild(el("i", { "class": "key-" + s[0] }));
      span.appendChild(document.createTextNode(s[2] + " " + totals[s[1]]));
      legend.appendChild(span);
    });
    var axis = $("chart-axis");
    axis.textContent = "";
    if (days.length) {
      axis.appendChild(el("span", {}, days[0].date));
      axis.appendChild(el("span", {}, days[days.length - 1].date));
    }
  }


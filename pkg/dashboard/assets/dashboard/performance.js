  // --- performance (the overview) -----------------------------------------------------------------
  //
  // What the program's partners brought in over a period, against the period before: the KPIs, a chart of
  // money and one of counts per day (with axes), and the partners' table, sorted by the server by the
  // column chosen, with a CSV of what it shows (docs/rules.md#reports).

  var perf = { sort: "revenue_cents", order: "desc", rows: [] };
  var PERIOD_WORDS = { "7d": "the previous 7 days", "30d": "the previous 30 days", "90d": "the previous 90 days" };

  function startPerformance() {
    ["perf-period", "perf-currency"].forEach(function (id) {
      $(id).addEventListener("change", function () { refreshPerformance().catch(function (err) { notice(err.message, true); }); });
    });
    $("perf-controls").addEventListener("submit", function (e) { e.preventDefault(); });
    document.querySelectorAll("#perf-partners th[data-sort] button").forEach(function (b) {
      b.addEventListener("click", function () {
        var key = b.parentNode.getAttribute("data-sort");
        perf.order = perf.sort === key && perf.order === "desc" ? "asc" : "desc";
        perf.sort = key;
        refreshPerformers().catch(fail);
      });
    });
    $("perf-csv").addEventListener("click", function (e) {
      var a = $("perf-csv");
      if (a.href && a.href.indexOf("blob:") === 0) URL.revokeObjectURL(a.href);
      a.href = URL.createObjectURL(new Blob([performersCSV()], { type: "text/csv" }));
      a.download = "partners-" + $("perf-period").value + "-" + perf.currency + ".csv";
      if (!perf.rows.length) { e.preventDefault(); notice("No partner had a click, lead or sale in this period.", true); }
    });
  }

  function perfQuery() { return query({ period: $("perf-period").value, currency: $("perf-currency").value }); }

  function refreshPerformance() {
    var denied = !state.actions["tracking:list"];
    $("perf-denied").hidden = !denied;
    $("perf-body").hidden = denied;
    $("perf-controls").hidden = denied;
    if (denied) {
      $("perf-denied").textContent = "Your role (" + $("role").textContent + ") does not include the reports.";
      return Promise.resolve();
    }
    return Promise.all([latest("performance", programPath("/performance" + perfQuery())).then(function (res) {
      if (res) drawPerformance(res.data);
    }), refreshPerformers()]);
  }

  function drawPerformance(p) {
    $("perf-span").textContent = p.date_from === p.date_to ? p.date_from + " (UTC)" : p.date_from + " to " + p.date_to + " (UTC)";
    var t = p.totals, prev = p.previous, cur = p.currency;
    var rate = function (r) { return (r * 100).toFixed(2) + " %"; };
    var kpis = [
      ["revenue", "Revenue", money(t.revenue_cents, cur), t.revenue_cents, prev && prev.revenue_cents],
      ["commission", "Commission", money(t.commission_cents, cur), t.commission_cents, prev && prev.commission_cents],
      ["sales", "Sales", String(t.sales), t.sales, prev && prev.sales],
      ["leads", "Leads", String(t.leads), t.leads, prev && prev.leads],
      ["clicks", "Clicks", String(t.clicks), t.clicks, prev && prev.clicks],
      ["conversion", "Conversion", rate(t.conversion_rate), t.conversion_rate, prev && prev.conversion_rate],
      ["lead-rate", "Lead rate", rate(t.lead_rate), t.lead_rate, prev && prev.lead_rate],
      ["average", "Average order", money(t.average_order_cents, cur), t.average_order_cents, prev && prev.average_order_cents],
      ["partners", "Active partners", String(t.partners), t.partners, prev && prev.partners],
    ];
    var dl = $("kpis");
    dl.textContent = "";
    kpis.forEach(function (k) {
      var box = dl.appendChild(el("div", { "class": "kpi", "data-kpi": k[0] }));
      box.appendChild(el("dt", {}, k[1]));
      var dd = box.appendChild(el("dd", {}));
      dd.appendChild(el("span", { "class": "value" }, k[2]));
      if (prev) {
        var c = change(k[3], k[4]);
        dd.appendChild(el("span", { "class": "change " + c[0] }, c[1] + " vs " + PERIOD_WORDS[p.period]));
      }
    });
    // Bots' clicks are filtered everywhere; the page says how many, so that a test from a headless
    // browser (a bot by its User-Agent) is not a mystery.
    if (t.bot_clicks) {
      dl.querySelector('[data-kpi="clicks"] dd').appendChild(el("span", { "class": "bots" }, "+ " + plural(t.bot_clicks, "click", "clicks") + " from bots, filtered"));
    }
    $("bots-note").hidden = !t.bot_clicks;
    $("bots-note").textContent = t.bot_clicks ? "Filtered as bots and not counted: " + plural(t.bot_clicks, "click", "clicks") + " in the period shown above (" +
      $("perf-span").textContent + "). A click whose User-Agent is a crawler, a link checker or a headless browser (such as HeadlessChrome) is a bot's." : "";
    var days = p.series;
    chart("perf-money", "perf-money-legend", days, [["revenue_cents", "Revenue", "revenue"], ["commission_cents", "Commission", "commission"]],
      function (v) { return money(v, cur); }, function (v) { return axisMoney(v, cur); });
    chart("perf-counts", "perf-counts-legend", days, [["clicks", "Clicks", "click"], ["leads", "Leads", "lead"], ["sales", "Sales", "conversion"]],
      String, String);
  }

  // change says how much a total moved against the previous period, in words and a direction.
  function change(now, before) {
    if (now === before) return ["same", "no change"];
    if (!before) return ["up", "new"];
    var pct = Math.round((now - before) * 100 / before);
    if (pct === 0) return [now > before ? "up" : "down", now > before ? "up under 1 %" : "down under 1 %"];
    return [pct > 0 ? "up" : "down", (pct > 0 ? "up " : "down ") + Math.abs(pct) + " %"];
  }

  // axisMoney is an axis label: whole major units, without the currency (the caption's legend names it).
  function axisMoney(cents, currency) {
    var d = digitsOf(currency);
    return String(Math.round(cents / Math.pow(10, d)));
  }

  // niceStep is a round step (1, 2 or 5 times a power of ten) that divides max into about four.
  function niceStep(max) {
    var raw = Math.max(max / 4, 1), p = Math.pow(10, Math.floor(Math.log10(raw))), n = raw / p;
    return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * p;
  }

  // chart draws the days as groups of bars (one per series) on axes: a y axis with round ticks and grid
  // lines, and the first, middle and last days (every day for a week) under the x axis.
  function chart(id, legendId, days, series, fmt, fmtAxis) {
    var svgEl = $(id);
    svgEl.textContent = "";
    var W = 640, H = 240, L = 64, R = 8, T = 10, B = 30, pw = W - L - R, ph = H - T - B;
    var max = 0, totals = {};
    series.forEach(function (s) { totals[s[0]] = 0; });
    days.forEach(function (d) { series.forEach(function (s) { max = Math.max(max, d[s[0]]); totals[s[0]] += d[s[0]]; }); });
    var step = niceStep(max), top = Math.max(step, Math.ceil(max / step) * step);
    for (var v = 0; v <= top + step / 2; v += step) {
      var y = T + ph - ph * v / top;
      svgEl.appendChild(svg("line", { x1: L, x2: W - R, y1: y.toFixed(1), y2: y.toFixed(1), "class": v ? "gridline" : "axis-line" }));
      var label = svg("text", { x: L - 6, y: (y + 4).toFixed(1), "text-anchor": "end", "class": "tick" });
      label.textContent = fmtAxis(v);
      svgEl.appendChild(label);
    }
    var slot = pw / Math.max(days.length, 1), bar = Math.max(1, (slot * 0.8) / series.length);
    var marks = days.length <= 8 ? days.map(function (_, i) { return i; }) : [0, Math.floor((days.length - 1) / 2), days.length - 1];
    days.forEach(function (d, i) {
      series.forEach(function (s, j) {
        var n = d[s[0]];
        if (!n) return;
        var h = Math.max(1.5, ph * n / top);
        var r = svg("rect", { "class": "bar-" + s[2], x: (L + i * slot + slot * 0.1 + j * bar).toFixed(1), y: (T + ph - h).toFixed(1),
          width: bar.toFixed(1), height: h.toFixed(1), "data-date": d.date, "data-series": s[0], "data-n": n });
        var title = svg("title", {});
        title.textContent = d.date + ": " + s[1] + " " + fmt(n);
        r.appendChild(title);
        svgEl.appendChild(r);
      });
      if (marks.indexOf(i) >= 0) {
        var x = L + i * slot + slot / 2;
        var tick = svg("text", { x: x.toFixed(1), y: H - 10, "text-anchor": i === 0 && days.length > 8 ? "start" : i === days.length - 1 && days.length > 8 ? "end" : "middle", "class": "tick" });
        tick.textContent = days.length <= 8 ? d.date.slice(5) : d.date;
        svgEl.appendChild(tick);
      }
    });
    var legend = $(legendId);
    legend.textContent = "";
    series.forEach(function (s) {
      var span = el("span", { "data-series": s[0] });
      span.appendChild(el("i", { "class": "key-" + s[2] }));
      span.appendChild(document.createTextNode(s[1] + " " + fmt(totals[s[0]])));
      legend.appendChild(span);
    });
  }

  function refreshPerformers() {
    var q = perfQuery() + "&sort=" + perf.sort + "&order=" + perf.order + "&limit=100";
    document.querySelectorAll("#perf-partners th[data-sort]").forEach(function (th) {
      var on = th.getAttribute("data-sort") === perf.sort;
      if (on) th.setAttribute("aria-sort", perf.order === "desc" ? "descending" : "ascending"); else th.removeAttribute("aria-sort");
    });
    return latest("performers", programPath("/performance/partners" + q)).then(function (res) {
      if (!res) return;
      var currency = res.data.currency; // the program's default when the picker names none yet
      perf.rows = res.data.partners;
      perf.currency = currency;
      var body = document.querySelector("#perf-partners tbody");
      body.textContent = "";
      perf.rows.forEach(function (r) {
        var tr = body.appendChild(el("tr", { "data-partner": r.partner_id }));
        tr.appendChild(el("td", {}, r.name));
        [String(r.clicks), String(r.leads), String(r.sales), money(r.revenue_cents, currency), money(r.commission_cents, currency),
          (r.conversion_rate * 100).toFixed(2) + " %"].forEach(function (v) { tr.appendChild(el("td", { "class": "num" }, v)); });
      });
      if (!perf.rows.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 7, "class": "muted" }, "No partner had a click, lead or sale in this period."));
    });
  }

  // performersCSV is the partners' table as CSV (RFC 4180), amounts in minor units as the API gives them.
  function performersCSV() {
    var cell = function (v) { v = String(v); return /[",\r\n]/.test(v) || /^[=+\-@]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v; };
    var lines = [["partner_id", "name", "email", "clicks", "leads", "sales", "customers", "revenue_cents", "commission_cents", "currency", "conversion_rate", "lead_rate", "average_order_cents"].join(",")];
    perf.rows.forEach(function (r) {
      lines.push([r.partner_id, r.name, r.email, r.clicks, r.leads, r.sales, r.customers, r.revenue_cents, r.commission_cents, perf.currency, r.conversion_rate, r.lead_rate, r.average_order_cents].map(cell).join(","));
    });
    return lines.join("\r\n") + "\r\n";
  }


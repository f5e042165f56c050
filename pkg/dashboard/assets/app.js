// The reftrack dashboard: plain JavaScript, no dependencies. It reads and changes everything through
// the same documented API the CLI and integrators use, authenticated by the session cookie; calls that
// change something carry the page's CSRF token.
"use strict";
(function () {
  var PAGE_SIZE = 20;
  var REFRESH_MS = 5000;
  var SERIES = [["click", "clicks", "Clicks"], ["lead", "leads", "Leads"], ["conversion", "conversions", "Conversions"]];
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var state = { me: null, program: null, actions: {}, page: 1, filters: { eventType: "", from: "", to: "", test: false }, busy: false };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  // api calls a JSON route; it rejects with the error envelope's message.
  // latest answers a read with null when a newer read of the same kind was sent meanwhile, so that a slow
  // answer (a refresh started before a filter changed) never overwrites a newer one, nor its failure a
  // newer success.
  var reads = {};
  function latest(kind, path) {
    var n = reads[kind] = (reads[kind] || 0) + 1;
    return api("GET", path).then(function (res) { return n === reads[kind] ? res : null; },
      function (err) { if (n === reads[kind]) throw err; return null; });
  }

  function api(method, path, body) {
    var opts = { method: method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") opts.headers["X-CSRF-Token"] = csrf;
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (res) {
      if (res.status === 401) {
        window.location.assign("/dashboard/login");
        throw new Error("Your session has ended; signing in again.");
      }
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (!res.ok) {
          var msg = (json.error && json.error.message) || json.message || "Request failed (" + res.status + ")";
          var err = new Error(msg);
          err.status = res.status;
          throw err;
        }
        return json;
      });
    });
  }

  function notice(msg, isError) {
    var n = $("notice");
    n.textContent = msg || "";
    n.hidden = !msg;
    n.className = "notice" + (isError ? " error" : "");
  }
  function fail(err) { notice(err.message, true); }

  function query(params) {
    var parts = [];
    for (var k in params) {
      if (params[k] !== "" && params[k] != null) parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(params[k]));
    }
    return parts.length ? "?" + parts.join("&") : "";
  }

  function fmtTime(iso) { return iso.replace("T", " ").replace(/(\.\d+)?Z$/, ""); }

  // money formats integer minor units without floating point.
  function money(cents, currency) {
    var digits = 2;
    try {
      digits = new Intl.NumberFormat("en", { style: "currency", currency: currency }).resolvedOptions().maximumFractionDigits;
    } catch (e) { /* unknown currency code: two digits */ }
    var neg = cents < 0, s = String(Math.abs(cents));
    if (digits > 0) {
      while (s.length <= digits) s = "0" + s;
      s = s.slice(0, s.length - digits) + "." + s.slice(s.length - digits);
    }
    return (neg ? "-" : "") + s + " " + currency;
  }

  // --- start -------------------------------------------------------------------------------------

  function start() {
    $("filters").addEventListener("submit", function (e) {
      e.preventDefault();
      state.filters = { eventType: $("f-type").value, from: $("f-from").value, to: $("f-to").value, test: $("f-test").checked };
      state.page = 1;
      refreshActivity().catch(fail);
    });
    $("f-test").addEventListener("change", function () { $("filters").requestSubmit(); });
    $("prev").addEventListener("click", function () { state.page--; refreshEvents().catch(fail); });
    $("next").addEventListener("click", function () { state.page++; refreshEvents().catch(fail); });
    $("program").addEventListener("change", function () { choose(Number($("program").value)); });
    $("regenerate").addEventListener("click", regenerate);
    api("GET", "/api/v1/me").then(function (me) {
      state.me = me.data;
      var progs = me.data.programs;
      if (!progs.length) {
        $("empty").hidden = false;
        document.body.setAttribute("data-loaded", "");
        return;
      }
      progs.forEach(function (p) { $("program").appendChild(el("option", { value: p.id }, p.name)); });
      var wanted = Number((window.location.hash.match(/program=(\d+)/) || [])[1]);
      var first = progs.filter(function (p) { return p.id === wanted; })[0] || progs[0];
      $("program").value = first.id;
      choose(first.id);
    }).catch(fail);
    setInterval(function () {
      if (!document.hidden && state.program && !state.busy) {
        state.busy = true;
        Promise.all([refreshActivity(), refreshReadiness()]).catch(function () {}).then(function () { state.busy = false; });
      }
    }, REFRESH_MS);
  }

  function choose(id) {
    var p = state.me.programs.filter(function (x) { return x.id === id; })[0];
    var ws = state.me.workspaces.filter(function (w) { return w.advertiser_id === p.advertiser_id; })[0];
    state.program = p;
    state.page = 1;
    state.actions = {};
    ws.actions.forEach(function (a) { state.actions[a] = true; });
    history.replaceState(null, "", "#program=" + id);
    $("role").textContent = ws.role;
    $("role-part").hidden = !ws.role; // no separator before nothing (an account without a workspace)
    $("program-name").textContent = p.name;
    $("program-domain").textContent = p.domain;
    ["overview", "activity", "links-panel", "key-panel"].forEach(function (s) { $(s).hidden = false; });
    notice("");
    // data-loaded tells (tests, scripts) when the program's first load has finished, failed or not.
    document.body.removeAttribute("data-loaded");
    Promise.all([refreshReadiness(), refreshActivity(), refreshLinks(), refreshKey()]).catch(fail).then(function () {
      document.body.setAttribute("data-loaded", String(id));
    });
  }

  // --- readiness -----------------------------------------------------------------------------------

  function refreshReadiness() {
    return latest("readiness", "/api/v1/programs/" + state.program.id + "/readiness").then(function (r) {
      if (!r) return;
      $("readiness-state").textContent = r.state;
      $("readiness-blocker").textContent = r.blocker ? "· next: " + r.gates[r.blocker].next_action : "";
      var list = $("checks");
      list.textContent = "";
      ["profile", "economics", "payout", "tracking", "live"].forEach(function (name) {
        var g = r.gates[name];
        var text = name + ": " + g.status + (g.status !== "pass" && g.next_action ? " — " + g.next_action : "");
        if (g.verdict) text += " (last test chain: click " + g.verdict.click + ", lead " + g.verdict.lead + ", sale " + g.verdict.sale + ")";
        list.appendChild(el("li", { "class": g.status, "data-gate": name }, text));
      });
      var c = r.counts_24h;
      $("counts-24h").textContent = c.clicks + " clicks, " + c.leads + " leads, " + c.sales + " sales";
    });
  }

  // --- events and chart ----------------------------------------------------------------------------

  function refreshActivity() {
    var denied = !state.actions["tracking:list"];
    $("activity-denied").hidden = !denied;
    ["chart-box", "events"].forEach(function (id) { $(id).hidden = denied; });
    document.querySelector(".pager").hidden = denied;
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
        tr.appendChild(el("td", { "class": "type type-" + e.event_type }, e.event_type));
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
      var p = res.meta.pagination;
      $("page-info").textContent = "Page " + (p.pageCount ? p.page : 0) + " of " + p.pageCount + " · " + p.total + (p.total === 1 ? " event" : " events");
      $("prev").disabled = p.page <= 1;
      $("next").disabled = p.page >= p.pageCount;
    });
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

  // --- partners and links --------------------------------------------------------------------------

  function refreshLinks() {
    var id = state.program.id;
    return Promise.all([api("GET", "/api/v1/programs/" + id + "/partners"), api("GET", "/api/v1/programs/" + id + "/links")]).then(function (r) {
      var partners = {};
      r[0].data.forEach(function (p) { partners[p.id] = p; });
      var body = document.querySelector("#links tbody");
      body.textContent = "";
      var canWrite = !!state.actions["links:write"];
      r[1].data.forEach(function (l) {
        var p = partners[l.partner_id];
        var tr = el("tr", { "data-link": l.short_link });
        var who = p ? p.name + " <" + p.email + ">" : "";
        if (p && p.synthetic) who += " — used by reftrack test --chain";
        tr.appendChild(el("td", {}, who));
        tr.appendChild(el("td", {}, l.short_link));
        tr.appendChild(el("td", { "class": "details" }, l.referral_url));
        var box = el("input", { type: "checkbox", role: "switch", "aria-label": "Link " + l.short_link + " on" });
        box.checked = l.enabled;
        box.disabled = !canWrite;
        if (!canWrite) box.title = "Your role cannot switch links";
        box.addEventListener("change", function () { switchLink(l, box); });
        var td = el("td", {});
        td.appendChild(box);
        td.appendChild(el("span", { "class": "switch-state" }, l.enabled ? " on" : " off"));
        tr.appendChild(td);
        body.appendChild(tr);
      });
      if (!r[1].data.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 4, "class": "muted" }, "No links yet."));
    });
  }

  function switchLink(link, box) {
    var want = box.checked;
    box.disabled = true;
    api("PATCH", "/api/v1/links/" + link.id, { enabled: want }).then(function (res) {
      link.enabled = res.data.enabled;
      box.nextSibling.textContent = link.enabled ? " on" : " off";
      notice("Link " + link.short_link + " is now " + (link.enabled ? "on" : "off") + ".");
    }).catch(function (err) {
      box.checked = !want;
      fail(err);
    }).then(function () { box.disabled = false; });
  }

  // --- API key -------------------------------------------------------------------------------------

  function refreshKey() {
    $("regenerate").hidden = !state.actions["keys:regenerate"];
    $("new-key").hidden = true;
    return showKey();
  }

  // showKey reads the key's masked form and shows it.
  function showKey() {
    return api("GET", "/api/v1/programs/" + state.program.id + "/api-key").then(function (res) {
      $("api-key").textContent = res.data.masked;
      $("key-meta").textContent = "created " + fmtTime(res.data.created_at);
    });
  }

  function regenerate() {
    if (!window.confirm("Regenerate the API key? The current key stops working at once.")) return;
    $("regenerate").disabled = true;
    api("POST", "/api/v1/programs/" + state.program.id + "/api-key").then(function (res) {
      $("new-key-value").textContent = res.data.api_key;
      $("new-key").hidden = false;
      return showKey();
    }).catch(fail).then(function () { $("regenerate").disabled = false; });
  }

  start();
})();

// The reftrack dashboard: plain JavaScript, no dependencies. It reads and changes everything through
// the same documented API the CLI and integrators use, authenticated by the session cookie; calls that
// change something carry the page's CSRF token.
"use strict";
(function () {
  var PAGE_SIZE = 20;
  var REFRESH_MS = 5000;
  // The API calls a sale event a conversion; the page says sales, as the counts do.
  var SERIES = [["click", "clicks", "Clicks"], ["lead", "leads", "Leads"], ["conversion", "conversions", "Sales"]];
  // A program's readiness state, in words.
  var STATES = { draft: "Draft", configuring: "Configuring", ready: "Ready", integration_verified: "Integration verified",
    live_verified: "Live, verified" };
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var LEDGER_PAGE_SIZE = 25;
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

  function api(method, path, body, headers) {
    var opts = { method: method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") opts.headers["X-CSRF-Token"] = csrf;
    for (var h in headers || {}) opts.headers[h] = headers[h];
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

  // EXPONENT is the number of minor-unit digits of the currencies the ledger pays in (the server's CSV
  // writes amounts with the same exponents); another currency's comes from Intl.
  var EXPONENT = { USD: 2, EUR: 2, VND: 0 };

  // money formats integer minor units without floating point.
  function money(cents, currency) {
    var digits = EXPONENT[currency];
    if (digits === undefined) {
      digits = 2;
      try {
        digits = new Intl.NumberFormat("en", { style: "currency", currency: currency }).resolvedOptions().maximumFractionDigits;
      } catch (e) { /* unknown currency code: two digits */ }
    }
    var neg = cents < 0, s = String(Math.abs(cents));
    if (digits > 0) {
      while (s.length <= digits) s = "0" + s;
      s = s.slice(0, s.length - digits) + "." + s.slice(s.length - digits);
    }
    return (neg ? "-" : "") + s + " " + currency;
  }

  // --- start -------------------------------------------------------------------------------------

  function start() {
    $("invite").addEventListener("submit", invite);
    $("filters").addEventListener("submit", function (e) {
      e.preventDefault();
      var from = $("f-from").value, to = $("f-to").value;
      if (from && to && from > to) {
        // Nothing is fetched: an empty table and the last chart would read as "no events".
        fail(new Error("The From date must be on or before the To date."));
        return;
      }
      notice("");
      state.filters = { eventType: $("f-type").value, from: from, to: to, test: $("f-test").checked };
      state.page = 1;
      refreshActivity().catch(fail);
    });
    $("f-test").addEventListener("change", function () { $("filters").requestSubmit(); });
    $("prev").addEventListener("click", function () { state.page--; refreshEvents().catch(fail); });
    $("next").addEventListener("click", function () { state.page++; refreshEvents().catch(fail); });
    $("program").addEventListener("change", function () { choose(Number($("program").value)); });
    $("regenerate").addEventListener("click", regenerate);
    startLedger();
    startWebhooks();
    startPerformance();
    startManage();
    api("GET", "/api/v1/me").then(function (me) {
      state.me = me.data;
      var progs = me.data.programs;
      if (!progs.length) {
        // The first program is made here: its form stands in for the empty picker.
        $("empty").hidden = false;
        $("new-program-panel").hidden = !creatingWorkspace();
        $("new-program-cancel").hidden = true;
        $("program").closest("label").hidden = true; // an empty picker beside "no programs" reads as broken
        document.body.setAttribute("data-loaded", "");
        return;
      }
      fillPrograms();
      var wanted = Number((window.location.hash.match(/program=(\d+)/) || [])[1]);
      var first = progs.filter(function (p) { return p.id === wanted; })[0] || progs[0];
      $("program").value = first.id;
      choose(first.id);
    }).catch(fail);
    setInterval(function () {
      if (!document.hidden && state.program && !state.busy) {
        state.busy = true;
        Promise.all([refreshActivity(), refreshReadiness(), refreshPerformance()]).catch(function () {}).then(function () { state.busy = false; });
      }
    }, REFRESH_MS);
  }

  // fillPrograms lists the account's programs in the picker.
  function fillPrograms() {
    var sel = $("program");
    sel.textContent = "";
    state.me.programs.forEach(function (p) { sel.appendChild(el("option", { value: p.id }, p.name)); });
    sel.closest("label").hidden = false;
    $("new-program-cancel").hidden = false;
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
    ["overview", "performance-panel", "setup-panel", "activity", "commissions-panel", "payouts-panel", "partners-panel", "links-panel",
      "settings-panel", "processor-panel", "team-panel", "key-panel", "webhooks-panel"].forEach(function (s) { $(s).hidden = false; });
    $("new-program-open").hidden = !creatingWorkspace();
    notice("");
    resetLedger();
    resetWebhooks();
    // data-loaded tells (tests, scripts) when the program's first load has finished, failed or not.
    document.body.removeAttribute("data-loaded");
    var listed = programPartners();
    panelNotice("settings", "");
    panelNotice("team", "");
    Promise.all([refreshTerms(), refreshReadiness(), refreshActivity(), refreshPerformance(), refreshPartners(listed), refreshLinks(listed),
      refreshKey(), refreshLedger(), refreshEndpoints(), refreshProcessor(), refreshTeam()]).catch(fail).then(function () {
      document.body.setAttribute("data-loaded", String(id));
    });
  }

  // --- the program's terms ------------------------------------------------------------------------

  function refreshTerms() {
    var id = state.program.id;
    return api("GET", "/api/v1/programs/" + id).then(function (res) {
      if (state.program.id !== id) return;
      // The terms in words come from the server (the one sentence the portal and the mails say too).
      $("program-terms").textContent = res.data.terms;
      refreshSettings(res.data);
    });
  }

  // --- readiness -----------------------------------------------------------------------------------

  function refreshReadiness() {
    return latest("readiness", "/api/v1/programs/" + state.program.id + "/readiness").then(function (r) {
      if (!r) return;
      $("readiness-state").textContent = STATES[r.state] || r.state.replace(/_/g, " ");
      $("readiness-state").setAttribute("data-state", r.state);
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
      $("counts-24h").textContent = plural(c.clicks, "click", "clicks") + ", " + plural(c.leads, "lead", "leads") + ", " +
        plural(c.sales, "sale", "sales");
    });
  }

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
          text = (who ? who.name : "partner " + c.partner_id) + " earned " + money(c.amount_cents, c.currency) + " (" + (STATUS_LABEL[c.status] || c.status) + ")";
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

  // --- commissions and payouts (the ledger) --------------------------------------------------------
  //
  // The Commissions and Payouts views read and act through the ledger's routes
  // (docs/rules.md#the-ledger-and-payouts). Amounts arrive as integer minor units and are shown with money().
  // Every action is a POST with an Idempotency-Key (act). Buttons exist only for the roles that may use them:
  // commissions:write approves and rejects, payouts:write creates payouts and marks them paid or failed; a
  // role that only reads (analyst) sees the lists, the balances and the exports.

  var STATUS_LABEL = { pending: "pending", reversed: "refunded", approved: "approved", in_payout: "in payout", paid: "paid",
    rejected: "rejected" };
  var ledger = {};

  function programPath(rest) { return "/api/v1/programs/" + state.program.id + rest; }

  function panelNotice(view, msg, isError) {
    var n = $(view + "-notice");
    n.textContent = msg || "";
    n.hidden = !msg;
    n.className = "notice" + (isError ? " error" : "");
  }

  // uuid is a random (version 4) UUID: crypto.randomUUID where the page is a secure context (https,
  // localhost), else built from crypto.getRandomValues, which every context has.
  function uuid() {
    if (window.crypto.randomUUID) return window.crypto.randomUUID();
    var b = window.crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 15) | 64;
    b[8] = (b[8] & 63) | 128;
    var h = Array.from(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }

  // act sends one of the ledger's actions (a POST) with an Idempotency-Key. The key belongs to the action,
  // its path and its body: sent again before its answer (a double click, a double submit), the action
  // carries the same key, so the server acts once and answers the repeat with the first answer. An
  // answer ends the action; without one (the network failed) the key stays for the retry.
  var actionKeys = {};
  function act(path, body) {
    var name = path + " " + (body === undefined ? "" : JSON.stringify(body));
    var key = actionKeys[name] || (actionKeys[name] = uuid());
    return api("POST", path, body, { "Idempotency-Key": key }).then(function (res) {
      delete actionKeys[name];
      return res;
    }, function (err) {
      if (err.status) delete actionKeys[name];
      throw err;
    });
  }

  // finish shows the outcome of an action in its view (p resolves to the message, or rejects with the
  // server's) and reloads what it may have changed: refresh, else both ledger views (their lists and
  // balances). It resolves to whether the action succeeded. The view is aria-busy until its actions
  // have finished.
  var acting = {};
  function finish(view, p, refresh) {
    var panel = $(view + "-panel");
    acting[view] = (acting[view] || 0) + 1;
    panel.setAttribute("aria-busy", "true");
    return p.then(function (msg) { panelNotice(view, msg); return true; }, function (err) { panelNotice(view, err.message, true); return false; })
      .then(function (ok) { return (refresh || refreshLedger)().then(function () { return ok; }); })
      .then(function (ok) {
        if (--acting[view] === 0) panel.removeAttribute("aria-busy");
        return ok;
      });
  }

  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }

  // nextDay is the UTC day after day (YYYY-MM-DD): the "to" day's end, as created_to is exclusive.
  function nextDay(day) {
    var t = new Date(day + "T00:00:00Z");
    t.setUTCDate(t.getUTCDate() + 1);
    return t.toISOString().slice(0, 10);
  }

  function startLedger() {
    $("c-filters").addEventListener("submit", function (e) {
      e.preventDefault();
      ledger.c.filters = { status: $("c-status").value, partner: $("c-partner").value, from: $("c-from").value, to: $("c-to").value };
      firstPage(ledger.c);
      ledger.partners = null; // partners added meanwhile join the filter
      refreshCommissions().catch(function (err) { panelNotice("commissions", err.message, true); });
    });
    $("c-prev").addEventListener("click", function () { turn(ledger.c, -1, refreshCommissions, "commissions"); });
    $("c-next").addEventListener("click", function () { turn(ledger.c, 1, refreshCommissions, "commissions"); });
    $("c-all").addEventListener("change", function () {
      var on = $("c-all").checked;
      document.querySelectorAll("#commissions tbody .pick input").forEach(function (box) {
        box.checked = on;
        if (on) ledger.c.selected[box.value] = true; else delete ledger.c.selected[box.value];
      });
      showSelection();
    });
    $("c-approve-selected").addEventListener("click", approveSelected);
    $("p-filters").addEventListener("submit", function (e) {
      e.preventDefault();
      ledger.p.status = $("p-status").value;
      firstPage(ledger.p);
      refreshPayouts().catch(function (err) { panelNotice("payouts", err.message, true); });
    });
    $("p-prev").addEventListener("click", function () { turn(ledger.p, -1, refreshPayouts, "payouts"); });
    $("p-next").addEventListener("click", function () { turn(ledger.p, 1, refreshPayouts, "payouts"); });
    $("p-create").addEventListener("submit", function (e) {
      e.preventDefault();
      createPayouts();
    });
  }

  // resetLedger starts both views afresh for the chosen program.
  function resetLedger() {
    ledger = {
      c: { filters: { status: "", partner: "", from: "", to: "" }, cursors: [""], index: 0, next: null, selected: {} },
      p: { status: "", cursors: [""], index: 0, next: null },
      partners: null,
    };
    ["c-filters", "p-filters", "p-create"].forEach(function (id) { $(id).reset(); });
    panelNotice("commissions", "");
    panelNotice("payouts", "");
  }

  // Lists page by cursor: cursors[i] reads page i (the first page has none), and a page's next_cursor
  // becomes the next page's.
  function firstPage(list) {
    list.cursors = [""];
    list.index = 0;
    list.next = null;
    if (list.selected) list.selected = {};
  }

  function turn(list, step, refresh, view) {
    if (step > 0) {
      if (!list.next) return;
      list.cursors[list.index + 1] = list.next;
    } else if (list.index === 0) {
      return;
    }
    list.index += step;
    if (list.selected) list.selected = {};
    refresh().catch(function (err) { panelNotice(view, err.message, true); });
  }

  function pageInfo(id, list, n, one, many) {
    $(id).textContent = "Page " + (list.index + 1) + " · " + plural(n, one, many) + (list.next ? "" : " · last page");
  }

  // refreshLedger reloads both views; a failure shows in its view.
  function refreshLedger() {
    return Promise.all([
      refreshCommissions().catch(function (err) { panelNotice("commissions", err.message, true); }),
      refreshPayouts().catch(function (err) { panelNotice("payouts", err.message, true); }),
    ]);
  }

  // canRead tells whether the role reads the ledger; without it the view says so (the element denied).
  function canRead(view, body) {
    var can = !!state.actions["commissions:read"];
    $(view + "-denied").hidden = can;
    body.forEach(function (id) { $(id).hidden = !can; });
    if (!can) $(view + "-denied").textContent = "Your role (" + ($("role").textContent || "none") + ") does not include the " + view + ".";
    return can;
  }

  // partners are the program's partners by id, read once per program (and again when the filters are
  // applied); they name the commissions' partners and fill the partner filter.
  function partners() {
    if (!ledger.partners) {
      var id = state.program.id;
      var p = api("GET", programPath("/partners")).then(function (res) {
        var byID = {};
        res.data.forEach(function (x) { byID[x.id] = x; });
        if (state.program.id === id) fillPartnerFilter(res.data);
        return byID;
      });
      p.catch(function () { if (ledger.partners === p) ledger.partners = null; });
      ledger.partners = p;
    }
    return ledger.partners;
  }

  function fillPartnerFilter(list) {
    var sel = $("c-partner"), keep = sel.value;
    sel.textContent = "";
    sel.appendChild(el("option", { value: "" }, "All"));
    list.forEach(function (x) { sel.appendChild(el("option", { value: x.id }, x.name)); });
    sel.value = keep;
    if (sel.value !== keep) sel.value = "";
  }

  function approvable(c) { return c.status === "pending"; }
  // inHold: the commission's hold has not ended; approving it then releases the hold (said on its button).
  function inHold(c) { return c.available_on && new Date(c.available_on).getTime() > Date.now(); }
  function rejectable(c) { return approvable(c) || c.status === "approved"; }

  function refreshCommissions() {
    if (!canRead("commissions", ["c-filters", "commissions", "c-pager"])) {
      $("c-bulk").hidden = true;
      return Promise.resolve();
    }
    var write = !!state.actions["commissions:write"];
    $("c-bulk").hidden = !write;
    document.querySelectorAll("#commissions thead .pick, #commissions thead .acts").forEach(function (th) { th.hidden = !write; });
    var c = ledger.c, f = c.filters;
    var q = query({
      status: f.status, partner_id: f.partner, created_from: f.from && f.from + "T00:00:00Z",
      created_to: f.to && nextDay(f.to) + "T00:00:00Z", cursor: c.cursors[c.index], limit: LEDGER_PAGE_SIZE,
    });
    return Promise.all([partners(), latest("commissions", programPath("/commissions") + q)]).then(function (r) {
      var byID = r[0], res = r[1];
      if (!res) return;
      c.next = res.meta.next_cursor;
      var body = document.querySelector("#commissions tbody");
      body.textContent = "";
      var shown = {};
      c.early = {}; // the approvable commissions shown that are still in their hold
      res.data.forEach(function (x) {
        if (write && approvable(x)) shown[x.id] = true;
        if (write && approvable(x) && inHold(x)) c.early[x.id] = true;
        body.appendChild(commissionRow(x, byID, write));
      });
      // The selection keeps what can still be approved on this page.
      Object.keys(c.selected).forEach(function (id) { if (!shown[id]) delete c.selected[id]; });
      if (!res.data.length) {
        var filtered = f.status || f.partner || f.from || f.to;
        body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 8, "class": "muted" },
          filtered ? "No commissions match these filters." : "No commissions yet: a sale referred by a partner makes one."));
      }
      pageInfo("c-page-info", c, res.data.length, "commission", "commissions");
      $("c-prev").disabled = c.index === 0;
      $("c-next").disabled = !c.next;
      showSelection();
    });
  }

  function commissionRow(x, byID, write) {
    var tr = el("tr", { "data-commission": x.id, "data-status": x.status });
    if (write) {
      var pick = tr.appendChild(el("td", { "class": "pick" }));
      if (approvable(x)) {
        var box = pick.appendChild(el("input", { type: "checkbox", value: x.id, "aria-label": "Select commission " + x.id }));
        box.checked = !!ledger.c.selected[x.id];
        box.addEventListener("change", function () {
          if (box.checked) ledger.c.selected[x.id] = true; else delete ledger.c.selected[x.id];
          showSelection();
        });
      }
    }
    tr.appendChild(el("td", {}, String(x.id)));
    tr.appendChild(el("td", {}, fmtTime(x.created_at)));
    var p = byID[x.partner_id];
    tr.appendChild(el("td", {}, p ? p.name : "Partner " + x.partner_id));
    var txn = tr.appendChild(el("td", { "class": "details" }, x.transaction_id));
    if (x.is_test) {
      txn.appendChild(document.createTextNode(" "));
      txn.appendChild(el("span", { "class": "badge badge-test" }, "test mode"));
    }
    var amount = tr.appendChild(el("td", { "class": "num amount" }, money(x.payable_cents, x.currency)));
    if (x.amount_cents !== x.payable_cents) {
      amount.appendChild(el("div", { "class": "muted" }, "of " + money(x.amount_cents, x.currency) +
        (x.reversed_amount_cents ? ", " + money(x.reversed_amount_cents, x.currency) + " refunded" : "")));
    }
    if (x.clawback_cents) amount.appendChild(el("div", { "class": "muted" }, "clawback " + money(x.clawback_cents, x.currency)));
    var st = tr.appendChild(el("td", { "class": "status" }));
    st.appendChild(el("span", { "class": "badge status-" + x.status }, STATUS_LABEL[x.status] || x.status));
    if (approvable(x) && x.available_on) st.appendChild(el("span", { "class": "muted" }, " payable from " + fmtTime(x.available_on)));
    if (x.payout_id) st.appendChild(el("span", {}, " · payout " + x.payout_id));
    if (x.rejected_reason) st.appendChild(el("span", { "class": "reason" }, " — " + x.rejected_reason));
    if (write) {
      var acts = tr.appendChild(el("td", { "class": "acts" }));
      if (approvable(x)) {
        var early = inHold(x);
        var approve = acts.appendChild(el("button", { type: "button", "class": "approve",
          "aria-label": (early ? "Approve early commission " + x.id + ", releasing its hold" : "Approve commission " + x.id) },
          early ? "Approve early" : "Approve"));
        approve.addEventListener("click", function () {
          approve.disabled = true;
          finish("commissions", act("/api/v1/commissions/" + x.id + "/approve", early ? { release_hold: true } : undefined).then(function () {
            return early ? "Commission " + x.id + " approved before its hold ended: the next payout pays it." : "Commission " + x.id + " approved.";
          })).then(function () { approve.disabled = false; });
        });
      }
      if (rejectable(x)) {
        var reject = acts.appendChild(el("button", { type: "button", "class": "reject", "aria-label": "Reject commission " + x.id }, "Reject"));
        reject.addEventListener("click", function () {
          inlineForm(tr, { name: "reason", label: "Reason", button: "Reject commission", max: 500, submit: function (reason) {
            return finish("commissions", act("/api/v1/commissions/" + x.id + "/reject", { reason: reason }).then(function () {
              return "Commission " + x.id + " rejected.";
            }));
          } });
        });
      }
    }
    return tr;
  }

  function showSelection() {
    var n = Object.keys(ledger.c.selected).length;
    var early = heldSelected().length;
    $("c-selected").textContent = n ? plural(n, "commission", "commissions") + " selected" +
      (early ? ", " + early + " in " + (early === 1 ? "its" : "their") + " hold: approving releases it" : "") : "Tick commissions to approve several at once.";
    var b = $("c-approve-selected");
    b.textContent = n ? "Approve selected (" + n + ")" : "Approve selected";
    b.disabled = !n || ledger.c.bulkBusy;
    var boxes = Array.from(document.querySelectorAll("#commissions tbody .pick input"));
    $("c-all").disabled = !boxes.length;
    $("c-all").checked = boxes.length > 0 && boxes.every(function (box) { return box.checked; });
  }

  // heldSelected answers the selected commissions still in their hold: approving them releases it, as
  // the row's "Approve early" does, and the selection's line says so before the click.
  function heldSelected() {
    var early = ledger.c.early || {};
    return Object.keys(ledger.c.selected).filter(function (id) { return early[id]; });
  }

  function approveSelected() {
    var ids = Object.keys(ledger.c.selected).map(Number).sort(function (a, b) { return a - b; });
    if (!ids.length) return;
    var early = heldSelected().length;
    ledger.c.bulkBusy = true;
    showSelection();
    finish("commissions", act(programPath("/commissions/approve"), early ? { ids: ids, release_hold: true } : { ids: ids }).then(function (res) {
      ledger.c.selected = {};
      return plural(res.data.length, "commission", "commissions") + " approved: " + res.data.map(function (x) { return x.id; }).join(", ") + "." +
        (early ? " " + (early === 1 ? "1 before its hold ended" : early + " before their hold ended") + ": the next payout pays " + (early === 1 ? "it." : "them.") : "");
    })).then(function () {
      ledger.c.bulkBusy = false;
      showSelection();
    });
  }

  // inlineForm opens a one-field form in a row under tr (a reason, a reference). The value is required,
  // 1 to max characters as the server counts them (code points, not blank), checked before anything is
  // sent; submit(value) sends it and resolves to whether it succeeded.
  function inlineForm(tr, o) {
    var open = tr.nextElementSibling;
    if (open && open.classList.contains("form-row")) {
      if (open.dataset.form === o.button) {
        open.querySelector("input").focus();
        return;
      }
      open.remove();
    }
    var row = el("tr", { "class": "form-row", "data-form": o.button });
    var td = row.appendChild(el("td", { colspan: tr.children.length }));
    var form = td.appendChild(el("form", { "class": "inline-form", novalidate: "" }));
    var label = form.appendChild(el("label", {}, o.label + " "));
    var input = label.appendChild(el("input", { name: o.name, type: "text", autocomplete: "off" }));
    var submit = form.appendChild(el("button", { type: "submit" }, o.button));
    var cancel = form.appendChild(el("button", { type: "button", "class": "link" }, "Cancel"));
    var error = form.appendChild(el("span", { "class": "form-error", role: "alert" }));
    cancel.addEventListener("click", function () { row.remove(); });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var v = input.value;
      if (!v.trim() || Array.from(v).length > o.max) {
        error.textContent = o.label + " is required: 1 to " + o.max + " characters.";
        input.focus();
        return;
      }
      error.textContent = "";
      submit.disabled = true;
      o.submit(v).then(function (ok) { if (!ok) submit.disabled = false; });
    });
    tr.after(row);
    input.focus();
  }

  function refreshPayouts() {
    if (!canRead("payouts", ["payouts-body"])) return Promise.resolve();
    var write = !!state.actions["payouts:write"];
    $("p-create").hidden = !write;
    document.querySelector("#payouts thead .acts").hidden = !write;
    var p = ledger.p;
    // The exports are of one status: the list's, else the payouts to pay (processing).
    var status = p.status || "processing";
    $("p-export-status").textContent = status;
    $("p-csv").href = programPath("/payouts.csv") + query({ status: status });
    $("p-paypal").href = programPath("/payouts.csv") + query({ status: status, format: "paypal" });
    var q = query({ status: p.status, cursor: p.cursors[p.index], limit: LEDGER_PAGE_SIZE });
    return Promise.all([latest("balances", programPath("/balances")), latest("payouts", programPath("/payouts") + q)]).then(function (r) {
      if (r[0]) drawBalances(r[0].data);
      var res = r[1];
      if (!res) return;
      p.next = res.meta.next_cursor;
      var body = document.querySelector("#payouts tbody");
      body.textContent = "";
      res.data.forEach(function (x) { body.appendChild(payoutRow(x, write)); });
      if (!res.data.length) {
        body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 7, "class": "muted" },
          p.status ? "No " + p.status + " payouts." : "No payouts yet."));
      }
      pageInfo("p-page-info", p, res.data.length, "payout", "payouts");
      $("p-prev").disabled = p.index === 0;
      $("p-next").disabled = !p.next;
    });
  }

  function drawBalances(rows) {
    var body = document.querySelector("#balances tbody");
    body.textContent = "";
    rows.forEach(function (b) {
      var tr = el("tr", { "data-balance": b.partner_id + " " + b.currency });
      tr.appendChild(el("td", {}, b.partner_name));
      tr.appendChild(el("td", {}, b.currency));
      ["pending_cents", "approved_cents", "in_payout_cents", "paid_cents", "clawback_owed_cents"].forEach(function (k) {
        tr.appendChild(el("td", { "class": "num", "data-bucket": k.replace(/_cents$/, "") }, money(b[k], b.currency)));
      });
      body.appendChild(tr);
    });
    if (!rows.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 7, "class": "muted" }, "No balances yet: they start with the first commission."));
  }

  function payoutRow(x, write) {
    var tr = el("tr", { "data-payout": x.id, "data-status": x.status });
    tr.appendChild(el("td", {}, String(x.id)));
    tr.appendChild(el("td", {}, fmtTime(x.created_at)));
    tr.appendChild(el("td", {}, x.partner_name + " <" + x.partner_email + ">"));
    var amount = tr.appendChild(el("td", { "class": "num amount" }, money(x.amount_cents, x.currency)));
    if (x.clawback_cents) amount.appendChild(el("div", { "class": "muted" }, "after a clawback of " + money(x.clawback_cents, x.currency)));
    tr.appendChild(el("td", { "class": "num" }, String(x.commission_count)));
    var st = tr.appendChild(el("td", { "class": "status" }));
    st.appendChild(el("span", { "class": "badge status-" + x.status }, x.status));
    if (x.status === "paid") st.appendChild(el("span", {}, " · " + x.external_reference + " · " + fmtTime(x.paid_at)));
    if (x.failure_reason) st.appendChild(el("span", { "class": "reason" }, " — " + x.failure_reason));
    if (write) {
      var acts = tr.appendChild(el("td", { "class": "acts" }));
      if (x.status === "processing") {
        acts.appendChild(el("button", { type: "button", "class": "paid", "aria-label": "Mark paid: payout " + x.id }, "Mark paid")).addEventListener("click", function () {
          inlineForm(tr, { name: "external_reference", label: "External reference", button: "Mark paid", max: 255, submit: function (ref) {
            return finish("payouts", act("/api/v1/payouts/" + x.id + "/paid", { external_reference: ref }).then(function (res) {
              return "Payout " + x.id + " is paid (" + res.data.external_reference + ").";
            }));
          } });
        });
        acts.appendChild(el("button", { type: "button", "class": "failed", "aria-label": "Mark failed: payout " + x.id }, "Mark failed")).addEventListener("click", function () {
          inlineForm(tr, { name: "reason", label: "Reason", button: "Mark failed", max: 500, submit: function (reason) {
            return finish("payouts", act("/api/v1/payouts/" + x.id + "/failed", { reason: reason }).then(function () {
              return "Payout " + x.id + " failed: its commissions are approved again, for a later payout.";
            }));
          } });
        });
      }
    }
    return tr;
  }

  function createPayouts() {
    var currency = $("p-currency").value, button = $("p-create-button");
    button.disabled = true;
    finish("payouts", act(programPath("/payouts"), currency ? { currency: currency } : {}).then(function (res) {
      var made = res.data;
      if (!made.length) {
        return "No payout due" + (currency ? " in " + currency : "") + ": no partner's approved total, less any clawback owed, reaches the program's payout minimum.";
      }
      return "Created " + plural(made.length, "payout", "payouts") + ": " + made.map(function (x) {
        return money(x.amount_cents, x.currency) + " to " + x.partner_name;
      }).join(", ") + ".";
    })).then(function () { button.disabled = false; });
  }

  // --- partners ------------------------------------------------------------------------------------
  //
  // The program's partners with their enrollment status and events, the brand's moves on them (approve or
  // reject an application, ban an approved partner, with an optional reason), and invitations by email
  // (send, resend, cancel). Names, emails and reasons are others' text: set as text only.

  // programPartners reads the program's partners once for the views that show them together (the Partners
  // view and the links' owners): each list counts every partner's events.
  function programPartners() { return api("GET", "/api/v1/programs/" + state.program.id + "/partners"); }

  // refreshPartners shows the partners (read again unless given) and the invitations.
  function refreshPartners(listed) {
    var id = state.program.id, canWrite = !!state.actions["partners:write"];
    $("invite").hidden = !canWrite;
    $("add-partner").hidden = !canWrite;
    return Promise.all([listed || programPartners(), api("GET", "/api/v1/programs/" + id + "/invitations")]).then(function (r) {
      if (state.program.id !== id) return;
      var body = document.querySelector("#partners tbody");
      body.textContent = "";
      r[0].data.forEach(function (p) {
        if (p.synthetic) return; // the chain's fixture partner is no one's to approve or ban
        var tr = el("tr", { "data-partner": p.id, "data-status": p.status });
        tr.appendChild(el("td", {}, p.name + " <" + p.email + ">"));
        var st = el("td", {}, p.status);
        if (p.status_reason) st.appendChild(el("span", { "class": "muted" }, " (" + p.status_reason + ")"));
        tr.appendChild(st);
        tr.appendChild(el("td", {}, String(p.stats.clicks)));
        tr.appendChild(el("td", {}, String(p.stats.leads)));
        tr.appendChild(el("td", {}, String(p.stats.sales)));
        var act = el("td", {});
        var moves = { pending: ["approve", "reject"], approved: ["ban"] }[p.status] || [];
        if (canWrite && moves.length) {
          var reason = el("input", { type: "text", maxlength: "500", placeholder: "reason (optional)", "aria-label": "Reason for " + p.name, "class": "reason" });
          if (moves[0] !== "approve") act.appendChild(reason);
          moves.forEach(function (m) {
            var b = el("button", { type: "button", "data-action": m }, m.charAt(0).toUpperCase() + m.slice(1));
            b.addEventListener("click", function () { movePartner(p, m, reason.value.trim(), b); });
            act.appendChild(b);
          });
          if (moves[0] === "approve") act.insertBefore(reason, act.children[1]);
        }
        tr.appendChild(act);
        body.appendChild(tr);
      });
      if (!body.children.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 6, "class": "muted" }, "No partners yet: add or invite one above."));
      var inv = document.querySelector("#invitations tbody");
      inv.textContent = "";
      r[1].data.forEach(function (x) {
        var tr = el("tr", { "data-invitation": x.id, "data-status": x.status });
        tr.appendChild(el("td", {}, x.email));
        tr.appendChild(el("td", {}, x.status));
        tr.appendChild(el("td", {}, plural(x.sent_count, "time", "times")));
        tr.appendChild(el("td", {}, x.expires_at.slice(0, 10)));
        var act = el("td", {});
        if (canWrite && (x.status === "sent" || x.status === "expired")) {
          [["resend", "Resend"], ["cancel", "Cancel"]].forEach(function (m) {
            var b = el("button", { type: "button", "data-action": m[0] }, m[1]);
            b.addEventListener("click", function () { invitationAction(x, m[0], b); });
            act.appendChild(b);
          });
        }
        tr.appendChild(act);
        inv.appendChild(tr);
      });
      if (!r[1].data.length) inv.appendChild(el("tr", {})).appendChild(el("td", { colspan: 5, "class": "muted" }, "No invitations sent."));
    });
  }

  function movePartner(p, move, reason, button) {
    if (move === "ban" && !window.confirm("Ban " + p.name + "? Their links stop working and their commissions not yet in a payout are rejected. This cannot be undone.")) return;
    button.disabled = true;
    var body = move !== "approve" && reason ? { reason: reason } : undefined;
    api("POST", programPath("/partners/" + p.id + "/" + move), body).then(function (res) {
      notice(p.name + " is now " + res.data.status + ".");
      var listed = programPartners();
      return Promise.all([refreshPartners(listed), refreshLinks(listed)]);
    }).catch(fail).then(function () { button.disabled = false; });
  }

  function invitationAction(x, action, button) {
    button.disabled = true;
    var call = action === "resend" ? api("POST", programPath("/invitations/" + x.id + "/resend")) : api("DELETE", programPath("/invitations/" + x.id));
    call.then(function () {
      notice(action === "resend" ? "The invitation to " + x.email + " was sent again with a new link." : "The invitation to " + x.email + " is canceled.");
      return refreshPartners();
    }).catch(fail).then(function () { button.disabled = false; });
  }

  function invite(e) {
    e.preventDefault();
    var body = { email: $("invite-email").value.trim() };
    if ($("invite-name").value.trim()) body.name = $("invite-name").value.trim();
    if ($("invite-message").value.trim()) body.message = $("invite-message").value.trim();
    api("POST", programPath("/invitations"), body).then(function () {
      notice("Invitation sent to " + body.email + ": the link in the mail is valid 30 days.");
      $("invite").reset();
      return refreshPartners();
    }).catch(fail);
  }

  // --- links ---------------------------------------------------------------------------------------

  // refreshLinks shows the links with their partners (read again unless given).
  function refreshLinks(listed) {
    var id = state.program.id;
    return Promise.all([listed || programPartners(), api("GET", "/api/v1/programs/" + id + "/links")]).then(function (r) {
      var partners = {};
      r[0].data.forEach(function (p) { partners[p.id] = p; });
      fillLinkPartners(r[0].data);
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
        var url = tr.appendChild(el("td", { "class": "details" }));
        url.appendChild(el("span", { "class": "url" }, l.referral_url));
        url.appendChild(document.createTextNode(" "));
        url.appendChild(el("button", { type: "button", "class": "copy", "data-text": l.referral_url, "aria-label": "Copy the referral URL of link " + l.short_link }, "Copy"));
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
      a.download = "partners-" + $("perf-period").value + "-" + $("perf-currency").value + ".csv";
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
    var d = EXPONENT[currency] === undefined ? 2 : EXPONENT[currency];
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
    var currency = $("perf-currency").value;
    document.querySelectorAll("#perf-partners th[data-sort]").forEach(function (th) {
      var on = th.getAttribute("data-sort") === perf.sort;
      if (on) th.setAttribute("aria-sort", perf.order === "desc" ? "descending" : "ascending"); else th.removeAttribute("aria-sort");
    });
    return latest("performers", programPath("/performance/partners" + q)).then(function (res) {
      if (!res) return;
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

  // --- forms: programs, settings, partners, links, the processor and the team ----------------------
  //
  // Every form sends what the API takes and shows the API's own refusal next to the field it names (the
  // messages begin with the field's name, as "cookie_window_days must be between 1 and 3650"), or under
  // the form when it names none. Nothing is checked here that the server does not check.

  // showErrors puts err's message beside the field of form it names, else in the form's error line.
  function showErrors(form, err) {
    clearErrors(form);
    var msg = err.message, fields = Array.prototype.slice.call(form.querySelectorAll(".field-error"));
    fields.sort(function (a, b) { return b.getAttribute("data-field").length - a.getAttribute("data-field").length; });
    var hit = fields.filter(function (f) {
      var name = f.getAttribute("data-field");
      return msg.indexOf(name + " ") === 0 || msg.indexOf(name + ":") >= 0 || msg.indexOf("Invalid " + name) === 0 || msg.indexOf('"' + name + '"') >= 0;
    })[0];
    var spot = hit || form.querySelector(".form-error") || $("notice");
    spot.textContent = msg;
    if (hit) {
      var input = form.querySelector('[name="' + hit.getAttribute("data-field") + '"]');
      if (input) { input.setAttribute("aria-invalid", "true"); input.focus(); }
    } else if (spot === $("notice")) {
      notice(msg, true);
    }
  }

  function clearErrors(form) {
    form.querySelectorAll(".field-error, .form-error").forEach(function (e) { e.textContent = ""; });
    form.querySelectorAll("[aria-invalid]").forEach(function (e) { e.removeAttribute("aria-invalid"); });
  }

  // submitting disables a form's submit button while p runs; it resolves to whether p succeeded.
  function submitting(form, p) {
    var b = form.querySelector('[type="submit"]');
    b.disabled = true;
    return p.then(function () { clearErrors(form); return true; }, function (err) { showErrors(form, err); return false; })
      .then(function (ok) { b.disabled = false; return ok; });
  }

  // numberOr is a form value as a JSON number when it reads as one, else as sent (the server refuses it
  // with its message).
  function numberOr(v) {
    v = v.trim();
    return v !== "" && isFinite(Number(v)) ? Number(v) : v;
  }

  function lines(v) { return v.split(/\r?\n/).map(function (s) { return s.trim(); }).filter(Boolean); }

  // copyButtons makes every .copy button inside root copy its input (data-copy) or its data-text.
  function copyText(text, button) {
    var done = function () {
      var was = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = was; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { notice("Copy it by hand: " + text, true); });
      return;
    }
    var area = el("textarea", { "class": "offscreen", "aria-hidden": "true" });
    area.value = text;
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); done(); } catch (e) { notice("Copy it by hand: " + text, true); }
    area.remove();
  }

  function startManage() {
    document.addEventListener("click", function (e) {
      var b = e.target.closest ? e.target.closest("button.copy") : null;
      if (!b) return;
      var text = b.getAttribute("data-text");
      if (text == null) text = $(b.getAttribute("data-copy")).value;
      copyText(text, b);
    });
    $("new-program-open").addEventListener("click", function () {
      $("new-program-panel").hidden = false;
      $("new-program").querySelector('[name="name"]').focus();
    });
    $("new-program-cancel").addEventListener("click", function () { $("new-program-panel").hidden = true; clearErrors($("new-program")); });
    $("new-program").addEventListener("submit", createProgram);
    $("created-key-hide").addEventListener("click", function () { $("created-key").hidden = true; $("created-key-value").value = ""; });
    $("settings").addEventListener("submit", saveSettings);
    $("processor").addEventListener("submit", connectProcessor);
    $("add-member").addEventListener("submit", addMember);
    $("add-partner").addEventListener("submit", addPartner);
    $("add-link").addEventListener("submit", addLink);
  }

  // creatingWorkspace is where a new program goes: the current program's workspace when the role may make
  // programs there, else the first such workspace; null when none.
  function creatingWorkspace() {
    var can = state.me.workspaces.filter(function (w) { return w.actions.indexOf("program:write") >= 0; });
    var here = state.program && can.filter(function (w) { return w.advertiser_id === state.program.advertiser_id; })[0];
    return here || can[0] || null;
  }

  function createProgram(e) {
    e.preventDefault();
    var form = $("new-program"), f = form.elements, ws = creatingWorkspace();
    if (!ws) { showErrors(form, new Error("Your role does not allow creating programs in this workspace.")); return; }
    var body = { name: f.name.value, domain: f.domain.value.trim(), commission_type: f.commission_type.value, commission_rate: numberOr(f.commission_rate.value) };
    if (f.cookie_window_days.value.trim()) body.cookie_window_days = numberOr(f.cookie_window_days.value);
    var origins = lines(f.allowed_origins.value);
    if (origins.length) body.allowed_origins = origins;
    var made;
    submitting(form, api("POST", "/api/v1/workspaces/" + ws.advertiser_id + "/programs", body).then(function (res) { made = res.data; })).then(function (ok) {
      if (!ok) return;
      form.reset();
      $("new-program-panel").hidden = true;
      $("empty").hidden = true;
      $("created-key-value").value = made.api_key;
      $("created-key").hidden = false;
      return api("GET", "/api/v1/me").then(function (me) {
        state.me = me.data;
        fillPrograms();
        $("program").value = made.program.id;
        choose(made.program.id);
        notice("Program " + made.program.name + " created. Add a partner and a link below, then connect your payment processor.");
      });
    }).catch(fail);
  }

  // settings holds the program as the form last showed it: only what changed is sent.
  var shownProgram = null;
  var SETTINGS_TEXT = ["name", "domain", "lead_auth", "commission_type", "commission_approval", "enrollment", "partner_approval"];
  var SETTINGS_NUMBER = ["commission_rate", "duration_months", "cookie_window_days", "attribution_window_days", "hold_days", "payout_minimum_cents"];

  function fillSettings(p) {
    shownProgram = p;
    var f = $("settings").elements;
    SETTINGS_TEXT.forEach(function (k) { f[k].value = p[k]; });
    SETTINGS_NUMBER.forEach(function (k) { f[k].value = p[k] == null ? (k === "duration_months" ? "0" : "") : String(p[k]); });
    f.allowed_origins.value = p.allowed_origins.join("\n");
    f.partner_link_codes.checked = p.partner_link_codes;
    clearErrors($("settings"));
  }

  function refreshSettings(p) {
    var can = !!state.actions["program:write"];
    $("settings-denied").hidden = can;
    $("settings").hidden = !can;
    if (!can) $("settings-denied").textContent = "Your role (" + $("role").textContent + ") cannot change the program's settings; its terms are shown above.";
    if (p) fillSettings(p);
  }

  function saveSettings(e) {
    e.preventDefault();
    var form = $("settings"), f = form.elements, p = shownProgram, body = {};
    SETTINGS_TEXT.forEach(function (k) { if (f[k].value !== p[k]) body[k] = f[k].value; });
    SETTINGS_NUMBER.forEach(function (k) {
      var v = f[k].value.trim(), was = p[k] == null ? (k === "duration_months" ? "0" : "") : String(p[k]);
      if (v !== was) body[k] = numberOr(v);
    });
    var origins = lines(f.allowed_origins.value);
    if (origins.join("\n") !== p.allowed_origins.join("\n")) body.allowed_origins = origins;
    if (f.partner_link_codes.checked !== p.partner_link_codes) body.partner_link_codes = f.partner_link_codes.checked;
    if (!Object.keys(body).length) { panelNotice("settings", "Nothing to save: no setting changed."); return; }
    var id = state.program.id;
    submitting(form, api("PATCH", "/api/v1/programs/" + id, body).then(function (res) {
      fillSettings(res.data);
      // The terms in words come from the server (the one sentence the portal and the mails say too).
      $("program-terms").textContent = res.data.terms;
      state.program.name = res.data.name;
      state.program.domain = res.data.domain;
      $("program-name").textContent = res.data.name;
      $("program-domain").textContent = res.data.domain;
      var opt = document.querySelector('#program option[value="' + id + '"]');
      if (opt) opt.textContent = res.data.name;
      panelNotice("settings", "Settings saved: " + Object.keys(body).join(", ").replace(/_/g, " ") + ".");
      return Promise.all([refreshReadiness(), refreshLinks()]);
    })).then(function (ok) { if (!ok) panelNotice("settings", ""); });
  }

  function refreshProcessor() {
    var can = !!state.actions["processor:write"];
    $("processor").hidden = !can;
    $("processor-denied").hidden = can;
    if (!can) $("processor-denied").textContent = "Your role (" + $("role").textContent + ") cannot connect the payment processor.";
    var id = state.program.id;
    return api("GET", programPath("/payment-processor")).then(function (res) {
      if (state.program.id !== id) return;
      var d = res.data;
      $("processor-url").value = d.webhook_url;
      var st = $("processor-status");
      st.setAttribute("data-connected", String(!!(d.provider && d.webhook_secret_set)));
      st.textContent = d.provider && d.webhook_secret_set
        ? "Stripe is connected: payments and refunds it reports are recorded" + (d.updated_at ? " (secret set " + fmtTime(d.updated_at) + " UTC)." : ".")
        : "Not connected: sales reach reftrack only from your server (the API or the SDK) until you add Stripe's webhook.";
    });
  }

  function connectProcessor(e) {
    e.preventDefault();
    var form = $("processor"), secret = form.elements.webhook_secret.value.trim();
    submitting(form, api("PUT", programPath("/payment-processor"), { provider: "stripe", webhook_secret: secret })).then(function (ok) {
      if (!ok) return;
      form.reset();
      notice("Stripe connected: its webhook events for this program are now verified with that secret.");
      return Promise.all([refreshProcessor(), refreshReadiness()]);
    }).catch(fail);
  }

  function refreshTeam() {
    var ws = state.program.advertiser_id;
    $("add-member").hidden = !state.actions["members:write"];
    return api("GET", "/api/v1/workspaces/" + ws + "/members").then(function (res) {
      if (state.program.advertiser_id !== ws) return;
      var body = document.querySelector("#members tbody");
      body.textContent = "";
      res.data.forEach(function (m) {
        var tr = body.appendChild(el("tr", { "data-member": m.email }));
        tr.appendChild(el("td", {}, m.email));
        tr.appendChild(el("td", {}, m.role));
        tr.appendChild(el("td", {}, m.account_id == null ? "invited, not signed in yet" : m.created_at.slice(0, 10)));
      });
    });
  }

  function addMember(e) {
    e.preventDefault();
    var form = $("add-member"), f = form.elements, body = { email: f.email.value.trim(), role: f.role.value };
    submitting(form, api("POST", "/api/v1/workspaces/" + state.program.advertiser_id + "/members", body)).then(function (ok) {
      if (!ok) return;
      form.reset();
      panelNotice("team", body.email + " is invited as " + body.role + ": they join when they sign in with that email.");
      return refreshTeam();
    }).catch(fail);
  }

  function addPartner(e) {
    e.preventDefault();
    var form = $("add-partner"), f = form.elements, body = { name: f.name.value, email: f.email.value.trim() };
    var made;
    submitting(form, api("POST", programPath("/partners"), body).then(function (res) { made = res.data; })).then(function (ok) {
      if (!ok) return;
      form.reset();
      ledger.partners = null; // the commissions' partner names and filter read them again
      notice(made.name + " is a partner of this program. Create a referral link for them under Links.");
      var listed = programPartners();
      return Promise.all([refreshPartners(listed), refreshLinks(listed)]).then(function () {
        $("add-link").elements.partner_id.value = made.id;
      });
    }).catch(fail);
  }

  function addLink(e) {
    e.preventDefault();
    var form = $("add-link"), f = form.elements, body = { partner_id: numberOr(f.partner_id.value) };
    if (f.short_link.value.trim()) body.short_link = f.short_link.value.trim();
    var made;
    submitting(form, api("POST", programPath("/links"), body).then(function (res) { made = res.data; })).then(function (ok) {
      if (!ok) return;
      f.short_link.value = "";
      notice("Link " + made.short_link + " created: share " + made.referral_url);
      return refreshLinks();
    }).catch(fail);
  }

  // fillLinkPartners lists the partners a link can be made for (not the test chain's fixture partner).
  function fillLinkPartners(list) {
    var sel = $("add-link").elements.partner_id, keep = sel.value;
    sel.textContent = "";
    list.forEach(function (p) {
      if (!p.synthetic && p.status !== "banned" && p.status !== "rejected") sel.appendChild(el("option", { value: p.id }, p.name + " <" + p.email + ">"));
    });
    if (keep) sel.value = keep;
    if (!sel.value && sel.options.length) sel.value = sel.options[0].value;
    $("add-link").hidden = !state.actions["links:write"] || !sel.options.length;
  }

  // --- webhooks ------------------------------------------------------------------------------------
  //
  // The Webhooks view reads and changes the program's outbound webhook endpoints through the
  // webhook-endpoints routes (owner and admin: webhooks:manage; another role sees why there is nothing).
  // A secret is answered once, when an endpoint is added or its secret rotated: the view shows it in one
  // box until the member hides it or leaves the program, and never again. Each endpoint's delivery log
  // opens on demand, newest first, a page at a time. URLs, descriptions and the receivers' answers are
  // others' text: they are only ever set as text (el, textContent, value), never parsed as HTML.

  var EVENT_TYPES = ["lead.created", "sale.created", "sale.refunded", "commission.created", "commission.updated", "payout.created",
    "payout.paid", "payout.failed", "partner.created", "partner.updated", "link.updated"];
  var DELIVERY_PAGE_SIZE = 10;
  var RESPONSE_PREVIEW = 200; // characters of an attempt's response body shown (the log keeps 1 KiB)
  var wh = {};

  function startWebhooks() {
    var picks = $("wh-events");
    EVENT_TYPES.forEach(function (t) {
      var label = picks.appendChild(el("label", { "class": "check" }));
      label.appendChild(el("input", { type: "checkbox", name: "events", value: t }));
      label.appendChild(document.createTextNode(" " + t));
    });
    $("wh-create").addEventListener("submit", function (e) {
      e.preventDefault();
      createEndpoint();
    });
    $("wh-secret-copy").addEventListener("click", copySecret);
    $("wh-secret-hide").addEventListener("click", hideSecret);
    $("wh-secret-value").addEventListener("focus", function () { $("wh-secret-value").select(); });
  }

  // resetWebhooks starts the view afresh for the chosen program; a secret on show goes.
  function resetWebhooks() {
    wh = { endpoints: [], logs: {}, secretFor: null };
    $("wh-create").reset();
    $("wh-create-error").textContent = "";
    hideSecret();
    panelNotice("webhooks", "");
  }

  function endpointPath(id, rest) { return "/api/v1/webhook-endpoints/" + id + (rest || ""); }

  // refreshWebhooks reads the endpoints and draws them; the open delivery logs are read again.
  function refreshWebhooks() {
    if (!state.actions["webhooks:manage"]) {
      denyWebhooks();
      return Promise.resolve();
    }
    $("webhooks-denied").hidden = true;
    $("webhooks-body").hidden = false;
    return latest("webhook-endpoints", programPath("/webhook-endpoints")).then(function (res) {
      if (!res) return;
      wh.endpoints = res.data;
      drawEndpoints();
    }, function (err) {
      if (err.status === 403) return denyWebhooks(); // the role changed since the page loaded
      throw err;
    });
  }

  // refreshEndpoints is refreshWebhooks for finish: a failure shows in the view.
  function refreshEndpoints() {
    return refreshWebhooks().catch(function (err) { panelNotice("webhooks", err.message, true); });
  }

  function denyWebhooks() {
    $("webhooks-body").hidden = true;
    $("webhooks-denied").hidden = false;
    $("webhooks-denied").textContent = "Webhooks are managed by the workspace's owner or admin. Your role (" +
      ($("role").textContent || "none") + ") cannot see or change them: ask an owner or admin.";
  }

  function drawEndpoints() {
    var list = $("endpoints");
    list.textContent = "";
    var ids = {};
    wh.endpoints.forEach(function (e) {
      ids[e.id] = true;
      list.appendChild(endpointCard(e));
      if (wh.logs[e.id].open) {
        drawLog(e.id); // what was read before, until the log is read again
        loadLog(e.id, false).catch(function (err) { panelNotice("webhooks", err.message, true); });
      }
    });
    Object.keys(wh.logs).forEach(function (id) { if (!ids[id]) delete wh.logs[id]; });
    if (wh.secretFor !== null && !ids[wh.secretFor]) hideSecret();
    if (!wh.endpoints.length) {
      list.appendChild(el("li", { "class": "muted empty" }, "No endpoints yet: add one below to receive the program's events."));
    }
  }

  function logOf(id) {
    return wh.logs[id] || (wh.logs[id] = { open: false, loaded: false, status: "", items: [], next: null, testType: "" });
  }

  function endpointCard(e) {
    var log = logOf(e.id);
    var li = el("li", { "class": "endpoint", "data-endpoint": e.id, "data-enabled": String(e.enabled) });
    var head = li.appendChild(el("div", { "class": "endpoint-head" }));
    head.appendChild(el("code", { "class": "endpoint-url" }, e.url));
    var st = head.appendChild(el("span", { "class": "endpoint-state" }));
    st.appendChild(el("span", { "class": "badge " + (e.enabled ? "state-enabled" : "state-disabled") }, e.enabled ? "enabled" : "disabled"));
    if (!e.enabled && e.disabled_reason) st.appendChild(el("span", { "class": "reason" }, " — " + e.disabled_reason));
    var meta = li.appendChild(el("p", { "class": "endpoint-meta" }));
    meta.appendChild(el("span", { "class": "endpoint-events" }, e.events && e.events.length ? "Events: " + e.events.join(", ") : "Events: all events"));
    if (e.description) meta.appendChild(el("span", { "class": "endpoint-description" }, " · " + e.description));
    meta.appendChild(el("span", { "class": "muted" }, " · added " + fmtTime(e.created_at)));
    if (e.secret_rotating_until) {
      meta.appendChild(el("span", { "class": "muted" }, " · signed with the previous secret too until " + fmtTime(e.secret_rotating_until)));
    }

    var acts = li.appendChild(el("div", { "class": "endpoint-acts" }));
    var test = acts.appendChild(el("form", { "class": "inline-form test-form" }));
    var label = test.appendChild(el("label", {}, "Test event "));
    var pick = label.appendChild(el("select", { name: "event_type" }));
    EVENT_TYPES.forEach(function (t) { pick.appendChild(el("option", { value: t }, t)); });
    pick.value = log.testType || (e.events && e.events.length ? e.events[0] : "sale.created");
    pick.addEventListener("change", function () { log.testType = pick.value; });
    var send = test.appendChild(el("button", { type: "submit", "class": "test", "aria-label": "Send test event to " + e.url }, "Send test event"));
    test.addEventListener("submit", function (ev) {
      ev.preventDefault();
      sendTest(e, pick.value, send);
    });
    var toggle = acts.appendChild(el("button", { type: "button", "class": "toggle", "aria-label": (e.enabled ? "Disable " : "Enable ") + e.url },
      e.enabled ? "Disable" : "Enable"));
    toggle.addEventListener("click", function () { switchEndpoint(e, toggle); });
    var rotate = acts.appendChild(el("button", { type: "button", "class": "rotate", "aria-label": "Rotate secret of " + e.url }, "Rotate secret"));
    rotate.addEventListener("click", function () { rotateSecret(e, rotate); });
    var remove = acts.appendChild(el("button", { type: "button", "class": "remove", "aria-label": "Remove " + e.url }, "Remove"));
    remove.addEventListener("click", function () { removeEndpoint(e, remove); });

    var logID = "wh-log-" + e.id;
    var opener = li.appendChild(el("button", { type: "button", "class": "link log-toggle", "aria-expanded": String(log.open), "aria-controls": logID },
      log.open ? "Hide the delivery log" : "Delivery log"));
    var box = li.appendChild(el("div", { "class": "log", id: logID }));
    box.hidden = !log.open;
    opener.addEventListener("click", function () {
      log.open = !log.open;
      opener.setAttribute("aria-expanded", String(log.open));
      opener.textContent = log.open ? "Hide the delivery log" : "Delivery log";
      box.hidden = !log.open;
      if (log.open) loadLog(e.id, false).catch(function (err) { panelNotice("webhooks", err.message, true); });
    });

    var filters = box.appendChild(el("form", { "class": "filters log-filters" }));
    var status = filters.appendChild(el("label", {}, "Status")).appendChild(el("select", { name: "status" }));
    [["", "All"], ["pending", "Pending"], ["succeeded", "Succeeded"], ["failed", "Failed"]].forEach(function (o) {
      status.appendChild(el("option", { value: o[0] }, o[1]));
    });
    status.value = log.status;
    filters.appendChild(el("button", { type: "submit", "class": "reload" }, "Reload"));
    filters.addEventListener("submit", function (ev) {
      ev.preventDefault();
      log.status = status.value;
      loadLog(e.id, false).catch(function (err) { panelNotice("webhooks", err.message, true); });
    });
    var table = box.appendChild(el("table", { "class": "grid deliveries" }));
    var hr = table.appendChild(el("thead")).appendChild(el("tr"));
    ["Created (UTC)", "Event", "Status", "Webhook id", "Attempts (UTC)"].forEach(function (h) { hr.appendChild(el("th", {}, h)); });
    hr.appendChild(el("th", { "class": "acts" }, "Actions"));
    table.appendChild(el("tbody"));
    var more = box.appendChild(el("p", { "class": "pager" })).appendChild(el("button", { type: "button", "class": "more", "aria-label": "More deliveries to " + e.url }, "More"));
    more.hidden = true;
    more.addEventListener("click", function () {
      more.disabled = true;
      loadLog(e.id, true).catch(function (err) { panelNotice("webhooks", err.message, true); }).then(function () { more.disabled = false; });
    });

    var recover = box.appendChild(el("form", { "class": "inline-form recover-form", novalidate: "" }));
    var since = recover.appendChild(el("label", {}, "Send again what it missed since (UTC) "))
      .appendChild(el("input", { name: "since", type: "datetime-local", step: "1" }));
    var go = recover.appendChild(el("button", { type: "submit", "class": "recover" }, "Recover"));
    var error = recover.appendChild(el("span", { "class": "form-error", role: "alert" }));
    recover.appendChild(el("span", { "class": "muted" }, "Every event of its types since then that did not reach it, disabled time included (not the samples sent as test events; events are kept 30 days)."));
    recover.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (!since.value) {
        error.textContent = "Choose the date and time (UTC) to recover from.";
        since.focus();
        return;
      }
      error.textContent = "";
      recoverSince(e, since.value, go);
    });
    return li;
  }

  // loadLog reads the first page of an endpoint's deliveries (more: the next page, added below). The log
  // is aria-busy while it loads.
  function loadLog(id, more) {
    var log = logOf(id);
    var q = query({ status: log.status, cursor: more ? log.next : "", limit: DELIVERY_PAGE_SIZE });
    var box = $("wh-log-" + id);
    if (box) box.setAttribute("aria-busy", "true");
    return latest("webhook-deliveries-" + id, endpointPath(id, "/deliveries" + q)).then(function (res) {
      if (!res) return;
      log.items = more ? log.items.concat(res.data) : res.data;
      log.next = res.meta.next_cursor;
      log.loaded = true;
      drawLog(id);
    }).then(function () {
      var now = $("wh-log-" + id); // the card may have been drawn again meanwhile
      if (now) now.removeAttribute("aria-busy");
      if (box && box !== now) box.removeAttribute("aria-busy");
    }, function (err) {
      if (box) box.removeAttribute("aria-busy");
      throw err;
    });
  }

  function drawLog(id) {
    var log = logOf(id), box = $("wh-log-" + id);
    if (!box) return;
    var body = box.querySelector("tbody");
    body.textContent = "";
    log.items.forEach(function (d) { body.appendChild(deliveryRow(d)); });
    if (log.loaded && !log.items.length) {
      body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 6, "class": "muted" },
        log.status ? "No " + log.status + " deliveries in the last 30 days." : "No deliveries in the last 30 days: send a test event to see one."));
    }
    box.querySelector("button.more").hidden = !log.next;
  }

  function deliveryRow(d) {
    var tr = el("tr", { "data-delivery": d.id, "data-status": d.status, "data-attempts": d.attempts.length });
    tr.appendChild(el("td", {}, fmtTime(d.created_at)));
    var ev = tr.appendChild(el("td", { "class": "event" }, d.event_type));
    if (d.is_test) {
      ev.appendChild(document.createTextNode(" "));
      ev.appendChild(el("span", { "class": "badge badge-test" }, "test"));
    }
    var st = tr.appendChild(el("td", { "class": "status" }));
    st.appendChild(el("span", { "class": "badge status-" + d.status }, d.status));
    if (d.status === "pending") {
      st.appendChild(el("span", { "class": "muted" }, d.next_attempt_at ? " · next attempt " + fmtTime(d.next_attempt_at) : " · next attempt now"));
    }
    tr.appendChild(el("td", { "class": "details webhook-id" }, d.webhook_id));
    var cell = tr.appendChild(el("td", { "class": "attempts" }));
    if (!d.attempts.length) cell.appendChild(el("span", { "class": "muted" }, "none yet"));
    else {
      var list = cell.appendChild(el("ol", { "class": "attempt-list" }));
      d.attempts.forEach(function (a) { list.appendChild(attemptItem(a)); });
    }
    var acts = tr.appendChild(el("td", { "class": "acts" }));
    var resend = acts.appendChild(el("button", { type: "button", "class": "resend", "aria-label": "Resend delivery " + d.id }, "Resend"));
    resend.addEventListener("click", function () { resendDelivery(d, resend); });
    return tr;
  }

  function attemptItem(a) {
    var li = el("li", { "class": a.succeeded ? "ok" : "bad" });
    var answer = a.response_status != null ? "HTTP " + a.response_status : "no answer";
    li.appendChild(el("span", { "class": "attempt-line" }, fmtTime(a.attempted_at) + " · " + answer + " · " + a.duration_ms + " ms"));
    if (a.error) li.appendChild(el("div", { "class": "reason attempt-error" }, a.error));
    if (a.response_body) {
      var chars = Array.from(a.response_body);
      var shown = chars.length > RESPONSE_PREVIEW ? chars.slice(0, RESPONSE_PREVIEW).join("") + "…" : a.response_body;
      li.appendChild(el("pre", { "class": "response", "aria-label": "Response body" }, shown));
    }
    return li;
  }

  // showSecret shows an endpoint's secret, answered this once, selected for copying.
  function showSecret(e, rotated) {
    wh.secretFor = e.id;
    $("wh-secret-note").textContent = rotated ?
      "New signing secret of " + e.url + ", shown only now: it cannot be shown again. Put it in your receiver; until " +
        fmtTime(e.secret_rotating_until) + " (UTC) deliveries are signed with the previous secret too." :
      "Signing secret of " + e.url + ", shown only now: it cannot be shown again (rotate it for a new one). Put it in your receiver to verify every delivery.";
    $("wh-secret-value").value = e.secret;
    $("wh-secret-copied").textContent = "";
    $("wh-secret").hidden = false;
    $("wh-secret").scrollIntoView({ block: "nearest" });
    $("wh-secret-value").focus();
  }

  function hideSecret() {
    wh.secretFor = null;
    $("wh-secret").hidden = true;
    $("wh-secret-value").value = "";
    $("wh-secret-note").textContent = "";
    $("wh-secret-copied").textContent = "";
  }

  // copySecret puts the secret on the clipboard; where the browser refuses, it stays selected for Ctrl+C.
  function copySecret() {
    var input = $("wh-secret-value");
    input.focus();
    input.select();
    var manual = function () { $("wh-secret-copied").textContent = "The secret is selected: press Ctrl+C (⌘C) to copy it."; };
    if (!navigator.clipboard || !window.isSecureContext) return manual();
    navigator.clipboard.writeText(input.value).then(function () { $("wh-secret-copied").textContent = "Copied."; }, manual);
  }

  function createEndpoint() {
    var url = $("wh-url").value.trim(), description = $("wh-description").value.trim(), button = $("wh-create-button");
    var events = Array.from(document.querySelectorAll("#wh-events input:checked")).map(function (box) { return box.value; });
    if (!url) {
      $("wh-create-error").textContent = "URL is required.";
      $("wh-url").focus();
      return;
    }
    $("wh-create-error").textContent = "";
    var body = { url: url };
    if (events.length) body.events = events;
    if (description) body.description = description;
    button.disabled = true;
    finish("webhooks", api("POST", programPath("/webhook-endpoints"), body).then(function (res) {
      $("wh-create").reset();
      showSecret(res.data, false);
      return "Endpoint added: " + res.data.url + ". Send it a test event to check your receiver.";
    }, function (err) {
      $("wh-create-error").textContent = err.message; // beside the form too: the view's notice may be out of sight
      throw err;
    }), refreshEndpoints).then(function () { button.disabled = false; });
  }

  function switchEndpoint(e, button) {
    button.disabled = true;
    finish("webhooks", api("PATCH", endpointPath(e.id), { enabled: !e.enabled }).then(function (res) {
      return res.data.enabled ? res.data.url + " is enabled again. Recover what it missed while disabled from its delivery log." :
        res.data.url + " is disabled: it receives nothing, and its pending deliveries have failed.";
    }), refreshEndpoints).then(function () { button.disabled = false; });
  }

  function rotateSecret(e, button) {
    button.disabled = true;
    finish("webhooks", api("POST", endpointPath(e.id, "/rotate-secret")).then(function (res) {
      showSecret(res.data, true);
      return "The secret of " + res.data.url + " is rotated.";
    }), refreshEndpoints).then(function () { button.disabled = false; });
  }

  function removeEndpoint(e, button) {
    if (!window.confirm("Remove the endpoint " + e.url + "? Nothing more is sent to it, and its delivery log is deleted.")) return;
    button.disabled = true;
    finish("webhooks", api("DELETE", endpointPath(e.id)).then(function () {
      return "Endpoint " + e.url + " removed.";
    }), refreshEndpoints).then(function () { button.disabled = false; });
  }

  // openLog opens an endpoint's delivery log (its first page is read by finish's refresh).
  function openLog(id) {
    logOf(id).open = true;
    var box = $("wh-log-" + id);
    if (!box) return;
    box.hidden = false;
    var opener = box.previousElementSibling;
    opener.setAttribute("aria-expanded", "true");
    opener.textContent = "Hide the delivery log";
  }

  // reloadLog is the refresh of an action on one endpoint's deliveries: its log from the first page.
  function reloadLog(id) {
    return function () { return loadLog(id, false).catch(function (err) { panelNotice("webhooks", err.message, true); }); };
  }

  function sendTest(e, type, button) {
    button.disabled = true;
    finish("webhooks", api("POST", endpointPath(e.id, "/test"), { event_type: type }).then(function () {
      openLog(e.id);
      return "Test event " + type + " queued for " + e.url + ": its delivery is in the log below (Reload to see its attempts).";
    }), reloadLog(e.id)).then(function () { button.disabled = false; });
  }

  // resendDelivery queues a delivery again; its row shows the answer in place, wherever the log is paged.
  function resendDelivery(d, button) {
    button.disabled = true;
    finish("webhooks", api("POST", "/api/v1/webhook-deliveries/" + d.id + "/resend").then(function (res) {
      var log = logOf(d.endpoint_id);
      log.items = log.items.map(function (x) { return x.id === d.id ? res.data : x; });
      drawLog(d.endpoint_id);
      return "Delivery " + d.id + " (" + d.event_type + ") queued again, with the same webhook id.";
    }), function () { return Promise.resolve(); }).then(function () { button.disabled = false; });
  }

  function recoverSince(e, local, button) {
    // datetime-local gives YYYY-MM-DDTHH:MM (seconds when not 0), read as UTC like every time on the page.
    var since = local + (/T\d\d:\d\d$/.test(local) ? ":00Z" : "Z");
    button.disabled = true;
    finish("webhooks", api("POST", endpointPath(e.id, "/recover"), { since: since }).then(function (res) {
      var n = res.data.queued;
      return n ? plural(n, "delivery", "deliveries") + " to " + e.url + " queued again since " + fmtTime(since) + "." :
        "Nothing to recover for " + e.url + " since " + fmtTime(since) + ": every event since then reached it.";
    }), reloadLog(e.id)).then(function () { button.disabled = false; });
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

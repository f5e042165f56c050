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


  // What the dashboard's and the partner portal's scripts share: elements, the API, notices, money. Each
  // page's own parts set LOGIN, where an ended session signs in again.
  var csrf = document.querySelector('meta[name="csrf-token"]').content;

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

  // label is an API enum value in words: the spec's (LABELS, its x-reftrack-labels, joined after this
  // file), else the value itself with spaces.
  function label(set, value) {
    var pairs = LABELS[set] || [];
    for (var i = 0; i < pairs.length; i++) if (pairs[i][0] === value) return pairs[i][1];
    return String(value).replace(/_/g, " ");
  }
  // labelOptions fills a filter's select with "All", then the set's values in words, in the spec's order.
  function labelOptions(select, set) {
    var keep = select.value;
    select.textContent = "";
    select.appendChild(el("option", { value: "" }, "All"));
    (LABELS[set] || []).forEach(function (p) { select.appendChild(el("option", { value: p[0] }, p[1].charAt(0).toUpperCase() + p[1].slice(1))); });
    select.value = keep;
  }

  // api calls a JSON route; it rejects with the error envelope's message (and the answer's status).
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
        window.location.assign(LOGIN);
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

  // EXPONENT (joined after this file, from the server's ISO 4217 list: pkg/webui/labels.go) is each
  // currency's number of minor-unit digits, as the ledger and its exports count them.

  // digitsOf is a currency's minor-unit digits (2 for a code the server does not know).
  function digitsOf(currency) { return EXPONENT[currency] === undefined ? 2 : EXPONENT[currency]; }

  // money formats integer minor units without floating point.
  function money(cents, currency) {
    var digits = digitsOf(currency);
    var neg = cents < 0, s = String(Math.abs(cents));
    if (digits > 0) {
      while (s.length <= digits) s = "0" + s;
      s = s.slice(0, s.length - digits) + "." + s.slice(s.length - digits);
    }
    return (neg ? "-" : "") + s + " " + currency;
  }

  // copyText copies text for button, which says Copied for a moment (or the notice says to copy it by hand).
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

  // startCopy makes every .copy button of the page copy its data-text, or the value of the input its
  // data-copy names.
  function startCopy() {
    document.addEventListener("click", function (e) {
      var b = e.target.closest ? e.target.closest("button.copy") : null;
      if (!b) return;
      var text = b.getAttribute("data-text");
      if (text == null) text = $(b.getAttribute("data-copy")).value;
      copyText(text, b);
    });
  }

  // Tables become cards on a phone (the styles): each cell is labelled with its column's heading
  // (data-label), which the narrow layout shows before the value. A table's rows are labelled as they are
  // drawn, whoever draws them.
  function labelCells(table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) { return th.textContent.trim(); });
    Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr) {
      Array.prototype.forEach.call(tr.children, function (td, i) {
        if (heads[i] && !td.hasAttribute("data-label") && !td.hasAttribute("colspan")) td.setAttribute("data-label", heads[i]);
      });
    });
  }
  function startCards() {
    Array.prototype.forEach.call(document.querySelectorAll("table.grid"), function (t) {
      labelCells(t);
      new MutationObserver(function () { labelCells(t); }).observe(t, { childList: true, subtree: true });
    });
  }


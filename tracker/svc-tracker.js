/*! reftrack browser tracker (svc-tracker.js). No dependencies; never throws into the host page. */
(function (window, document) {
  "use strict";
  if (window.svc && window.svc.__reftrack) return; // loaded twice: the first copy stays in charge

  var COOKIE = "svc_click_id";
  var STORED_URL = "svc_affiliate_url"; // localStorage: the referral URL that set the cookie
  var PREFIX = "[svc]";
  var DAY = 86400;

  var script = document.currentScript;
  var state = { programId: null, cookieDomain: null, apiBase: null, debug: false, started: false };
  // Work runs in order: signup() waits for the click a page load reported, so the cookie is there. Tasks
  // start in a later microtask, so options set by calls replayed at start-up apply to the first click.
  var queue = Promise.resolve();

  function log(level, args) {
    if (level !== "error" && !state.debug) return;
    try {
      var c = window.console;
      if (c && c[level]) c[level].apply(c, [PREFIX].concat([].slice.call(args)));
    } catch (e) { /* a broken console must not break the page */ }
  }
  function info() { log("info", arguments); }
  function warn() { log("warn", arguments); }
  function error() { log("error", arguments); }

  // guard wraps a public function so that nothing it does can throw into the page.
  function guard(name, fn) {
    return function () {
      try {
        return fn.apply(null, arguments);
      } catch (e) {
        error(name + " failed:", e);
        return undefined;
      }
    };
  }

  // enqueue runs task after the work before it and returns its promise, which never rejects.
  function enqueue(task) {
    var p = queue.then(task).catch(function (e) {
      error("unexpected error:", e);
      return null;
    });
    queue = p.then(function () {}, function () {});
    return p;
  }

  // --- cookies ----------------------------------------------------------------------------------------

  function readCookie(name) {
    var parts = document.cookie ? document.cookie.split("; ") : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf("=");
      if (parts[i].slice(0, eq) === name) {
        try {
          return decodeURIComponent(parts[i].slice(eq + 1));
        } catch (e) {
          return parts[i].slice(eq + 1);
        }
      }
    }
    return null;
  }

  function cookieAttributes(domain, maxAge) {
    var a = "; Path=/; Max-Age=" + maxAge + "; SameSite=Lax";
    if (domain) a += "; Domain=" + domain;
    if (window.location.protocol === "https:") a += "; Secure";
    return a;
  }

  // rootDomain is the highest domain the browser lets this page set a cookie on: the browser refuses
  // public suffixes (com, co.uk, github.io…), so the first candidate that sticks, shortest first, is it.
  // IP addresses and single-label hosts such as localhost get a host-only cookie (null).
  function rootDomain() {
    var host = window.location.hostname;
    if (!host || host.indexOf(".") < 0 || /^[0-9.]+$/.test(host) || host.indexOf(":") >= 0) return null;
    var labels = host.split(".");
    var probe = "svc_probe";
    var token = String(Math.random()).slice(2);
    for (var i = labels.length - 2; i >= 0; i--) {
      var candidate = labels.slice(i).join(".");
      document.cookie = probe + "=" + token + cookieAttributes(candidate, 10);
      if (readCookie(probe) === token) {
        document.cookie = probe + "=" + cookieAttributes(candidate, 0);
        return candidate;
      }
    }
    return null;
  }

  function writeClickCookie(clickId, days) {
    var domain = state.cookieDomain || rootDomain();
    document.cookie = COOKIE + "=" + encodeURIComponent(clickId) + cookieAttributes(domain, Math.round(days * DAY));
    if (readCookie(COOKIE) !== clickId) {
      error("the browser refused the " + COOKIE + " cookie" + (domain ? " on " + domain : "") +
        "; attribution is lost for this visitor");
      return false;
    }
    info("stored " + COOKIE + " for " + days + " days" + (domain ? " on " + domain : " (host only)"));
    return true;
  }

  function storage(op, value) {
    try {
      if (op === "get") return window.localStorage.getItem(STORED_URL);
      window.localStorage.setItem(STORED_URL, value);
    } catch (e) { /* storage blocked: getData().affiliateUrl is then null */ }
    return null;
  }

  // --- requests ---------------------------------------------------------------------------------------

  function apiBase() {
    if (state.apiBase) return state.apiBase;
    try {
      if (script && script.src) return new URL(script.src, window.location.href).origin;
    } catch (e) { /* fall through */ }
    return window.location.origin;
  }

  // post sends a JSON body and resolves to { ok, status, data, error }; it never rejects.
  function post(path, body) {
    return window.fetch(apiBase() + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      keepalive: true, // finish even when the visitor navigates away at once
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (json) {
        var err = res.ok ? null : (json && json.error) || { message: "HTTP " + res.status };
        return { ok: res.ok, status: res.status, data: res.ok ? json : null, error: err };
      });
    }, function (e) {
      return { ok: false, status: 0, data: null, error: { message: "network error: " + (e && e.message) } };
    });
  }

  // --- calls ------------------------------------------------------------------------------------------

  function affiliateParam() {
    try {
      return new URL(window.location.href).searchParams.get("aff");
    } catch (e) {
      return null;
    }
  }

  function reportClick() {
    if (!affiliateParam()) {
      info("no aff parameter in the page URL: no click to report");
      return Promise.resolve(null);
    }
    var existing = readCookie(COOKIE);
    var body = {
      affiliate_url: window.location.href,
      page_url: window.location.href,
      page_title: document.title || undefined,
      referrer_url: document.referrer || undefined,
      screen_resolution: window.screen ? window.screen.width + "x" + window.screen.height : undefined,
      viewport_size: window.innerWidth + "x" + window.innerHeight,
      language: window.navigator.language || undefined,
      existing_click_id: existing || undefined,
    };
    try {
      body.timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch (e) { /* older browsers */ }
    return post("/api/v1/track/click", body).then(function (res) {
      if (res.ok && res.data && res.data.click_id) {
        if (existing) {
          info("click " + res.data.click_id + " reported; keeping the first click " + existing + " (first click wins)");
          return existing;
        }
        if (writeClickCookie(res.data.click_id, res.data.cookie_window_days || 60)) storage("set", window.location.href);
        return res.data.click_id;
      }
      if (res.status === 410) warn("referral link turned off, no click recorded:", res.error.message);
      else error("click not recorded (" + res.status + "):", res.error.message);
      return null;
    });
  }

  function signup(userId, email) {
    if (userId === undefined || userId === null || userId === "") {
      error("signup(userId, email): userId is required");
      return Promise.resolve({ ok: false, status: 0, data: null, error: { message: "userId is required" } });
    }
    return enqueue(function () {
      var clickId = readCookie(COOKIE);
      var body = { customer_key: String(userId) };
      if (clickId) body.click_id = clickId;
      else warn("no " + COOKIE + " cookie: the lead is sent with customer_key alone and stays unattributed");
      if (email) body.email = String(email);
      return post("/api/v1/track/lead", body).then(function (res) {
        if (res.ok) info(res.data && res.data.provisional ? "lead recorded as provisional (the brand's backend settles it)" : "lead recorded");
        else if (!clickId && res.status === 400) warn("lead not recorded:", res.error.message);
        else error("lead not recorded (" + res.status + "):", res.error.message);
        return res;
      });
    });
  }

  function getClickId() {
    return readCookie(COOKIE);
  }

  function getData() {
    var clickId = readCookie(COOKIE);
    return {
      clickId: clickId,
      programId: state.programId,
      hasAttribution: clickId !== null,
      affiliateUrl: clickId !== null ? storage("get") : null,
    };
  }

  function init(options) {
    options = options || {};
    if (options.programId !== undefined && options.programId !== null) state.programId = String(options.programId);
    if (options.cookieDomain) state.cookieDomain = String(options.cookieDomain);
    if (options.apiBase) state.apiBase = String(options.apiBase).replace(/\/+$/, "");
    if (options.debug !== undefined) state.debug = !!options.debug;
    if (!state.programId) warn("init: no programId (data-svc-program-id or init({ programId }))");
    if (!state.started) {
      state.started = true;
      info("tracker ready for program " + state.programId + ", API " + apiBase());
      enqueue(reportClick);
    }
    return api;
  }

  function trackClick() {
    return enqueue(reportClick);
  }

  // ready resolves once the work queued so far (the page's click, signups) has finished.
  function ready() {
    return queue.then(function () { return getData(); });
  }

  var api = {
    __reftrack: true,
    init: guard("init", init),
    getClickId: guard("getClickId", getClickId),
    signup: guard("signup", signup),
    getData: guard("getData", getData),
    trackClick: guard("trackClick", trackClick),
    ready: guard("ready", ready),
  };

  // replay runs one queued call: a function (called with svc) or [method, ...args].
  function replay(entry) {
    try {
      if (typeof entry === "function") entry(api);
      else if (entry && typeof api[entry[0]] === "function") api[entry[0]].apply(null, [].slice.call(entry, 1));
      else error("unknown queued call:", entry);
    } catch (e) {
      error("queued call failed:", e);
    }
  }

  window.svc = api;
  window.loadSvc = guard("loadSvc", function (programId, options) {
    var o = {};
    for (var k in options || {}) o[k] = options[k];
    o.programId = programId;
    return init(o);
  });

  try {
    var data = script ? script.dataset : {};
    if (data.svcApiBase) state.apiBase = data.svcApiBase.replace(/\/+$/, "");
    if (data.svcCookieDomain) state.cookieDomain = data.svcCookieDomain;
    if (data.svcDebug !== undefined) state.debug = data.svcDebug !== "false";
    if (data.svcProgramId) init({ programId: data.svcProgramId });

    var pending = window.svcQueue;
    window.svcQueue = { push: replay };
    if (pending && pending.length) for (var i = 0; i < pending.length; i++) replay(pending[i]);
  } catch (e) {
    error("start-up failed:", e);
  }
})(window, document);

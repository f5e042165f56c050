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
    labelOptions(status, "WebhookDeliveryStatus");
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
        log.status ? "No " + label("WebhookDeliveryStatus", log.status) + " deliveries in the last 30 days." : "No deliveries in the last 30 days: send a test event to see one."));
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
    st.appendChild(el("span", { "class": "badge status-" + d.status }, label("WebhookDeliveryStatus", d.status)));
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
      // Said once, beside the form it refuses (not in the view's notice as well); the field keeps what was
      // typed, whole (no maxlength cuts it: the server says its limit).
      $("wh-create-error").textContent = err.message;
      $("wh-url").focus();
      return "";
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


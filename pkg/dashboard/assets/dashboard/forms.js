  // --- forms: programs, settings, partners, links, the processor and the team ----------------------
  //
  // Every form sends what the API takes and shows the API's own refusal next to the field it names (the
  // messages begin with the field's name, as "cookie_window_days must be between 1 and 3650"), or under
  // the form when it names none. Nothing is checked here that the server does not check.

  // showErrors puts err's message beside the field of form it names, else in the form's error line.
  // FIELD_WORDS names the API's fields in the page's words: a refusal that begins with a field's name is
  // shown in words ("Referral length must be between 1 and 3650"), and a save lists what it changed so.
  var FIELD_WORDS = { name: "name", domain: "site", allowed_origins: "allowed origins", lead_auth: "sign-ups from the browser",
    commission_type: "commission", commission_rate: "rate", duration_months: "recurring months",
    cookie_window_days: "referral length", attribution_window_days: "sales window", hold_days: "hold",
    commission_approval: "approval", payout_minimum_cents: "minimum payout", enrollment: "who may join",
    partner_approval: "applications", partner_link_codes: "partners' own link codes", email: "email", role: "role",
    partner_id: "partner", short_link: "link code", webhook_secret: "signing secret", currencies: "currencies",
    default_currency: "default currency" };

  // inWords is an API message with its field's name in words, capitalised where the message begins with it.
  function inWords(msg) {
    var names = Object.keys(FIELD_WORDS).sort(function (a, b) { return b.length - a.length; });
    for (var i = 0; i < names.length; i++) {
      var n = names[i], w = FIELD_WORDS[n];
      if (msg.indexOf(n + " ") === 0 || msg.indexOf(n + ":") === 0) return w.charAt(0).toUpperCase() + w.slice(1) + msg.slice(n.length);
      if (msg.indexOf(": " + n + ":") >= 0) return msg.replace(": " + n + ":", ": " + w + ":");
    }
    return msg;
  }

  // cents reads an amount in major units ("50", "50.5", "50.00") as integer minor units of a currency
  // with digits decimals, without floating point; null when it is not one.
  function cents(v, digits) {
    var m = (digits > 0 ? new RegExp("^(\\d{1,12})(?:\\.(\\d{1," + digits + "}))?$") : /^(\d{1,12})$/).exec(v.trim());
    if (!m) return null;
    var frac = ((m[2] || "") + "0000").slice(0, digits);
    return Number(m[1]) * Math.pow(10, digits) + Number(frac || "0");
  }

  // major writes minor units as an amount in major units of a currency with digits decimals ("50.00").
  function major(n, digits) {
    if (!digits) return String(n);
    var s = String(n);
    while (s.length <= digits) s = "0" + s;
    return s.slice(0, -digits) + "." + s.slice(-digits);
  }

  function showErrors(form, err) {
    clearErrors(form);
    var msg = err.message, fields = Array.prototype.slice.call(form.querySelectorAll(".field-error"));
    fields.sort(function (a, b) { return b.getAttribute("data-field").length - a.getAttribute("data-field").length; });
    var hit = fields.filter(function (f) {
      var name = f.getAttribute("data-field");
      return msg.indexOf(name + " ") === 0 || msg.indexOf(name + ":") >= 0 || msg.indexOf("Invalid " + name) === 0 || msg.indexOf('"' + name + '"') >= 0;
    })[0];
    var spot = hit || form.querySelector(".form-error") || $("notice");
    msg = inWords(msg);
    spot.textContent = msg;
    if (hit) {
      var input = form.querySelector('[name="' + hit.getAttribute("data-field") + '"]') ||
        form.querySelector('[aria-describedby="' + hit.id + '"]'); // a field asked in other units than sent
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

  function startManage() {
    startCopy();
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
        notice("Program " + made.program.name + " created. Add a partner and a link under Partners and Links, then connect your payment processor under Install.");
      });
    }).catch(fail);
  }

  // settings holds the program as the form last showed it: only what changed is sent.
  var shownProgram = null;
  var SETTINGS_TEXT = ["name", "domain", "lead_auth", "commission_type", "commission_approval", "enrollment", "partner_approval"];
  var SETTINGS_NUMBER = ["commission_rate", "duration_months", "cookie_window_days", "attribution_window_days", "hold_days"];

  function fillSettings(p) {
    shownProgram = p;
    var f = $("settings").elements;
    SETTINGS_TEXT.forEach(function (k) { f[k].value = p[k]; });
    SETTINGS_NUMBER.forEach(function (k) { f[k].value = p[k] == null ? (k === "duration_months" ? "0" : "") : String(p[k]); });
    f.allowed_origins.value = p.allowed_origins.join("\n");
    // Asked and shown in major units of the default currency, sent in its minor units.
    f.payout_minimum.value = major(p.payout_minimum_cents, digitsOf(p.default_currency));
    $("st-minimum-currency").textContent = p.default_currency;
    f.partner_link_codes.checked = p.partner_link_codes;
    f.currencies.value = p.currencies.join(", ");
    f.default_currency.value = p.default_currency;
    fillCurrencies(p);
    clearErrors($("settings"));
  }

  // fillCurrencies lists the program's currencies in the report's and the payout run's pickers, keeping
  // a choice still listed (the report opens on the program's default currency).
  function fillCurrencies(p) {
    [["perf-currency", null], ["p-currency", "Every currency"]].forEach(function (x) {
      var sel = $(x[0]), keep = sel.value;
      sel.textContent = "";
      if (x[1]) sel.appendChild(el("option", { value: "" }, x[1]));
      p.currencies.forEach(function (c) { sel.appendChild(el("option", { value: c }, c)); });
      sel.value = keep;
      if (sel.value !== keep || (!x[1] && !keep)) sel.value = x[1] ? "" : p.default_currency;
    });
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
    var minimum = cents(f.payout_minimum.value, digitsOf(p.default_currency));
    if (minimum === null) {
      showErrors(form, new Error("payout_minimum_cents must be an amount such as 50.00"));
      return;
    }
    if (minimum !== p.payout_minimum_cents) body.payout_minimum_cents = minimum;
    if (f.partner_link_codes.checked !== p.partner_link_codes) body.partner_link_codes = f.partner_link_codes.checked;
    // Codes as typed, upper-cased, one list: the server says which it refuses.
    var currencies = f.currencies.value.split(/[\s,]+/).filter(Boolean).map(function (c) { return c.toUpperCase(); });
    if (currencies.join(",") !== p.currencies.join(",")) body.currencies = currencies;
    var def = f.default_currency.value.trim().toUpperCase();
    if (def !== p.default_currency) body.default_currency = def;
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
      panelNotice("settings", "Settings saved: " + Object.keys(body).map(function (k) { return FIELD_WORDS[k] || k.replace(/_/g, " "); }).join(", ") + ".");
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
    var form = $("add-partner"), f = form.elements;
    var body = { name: f.name.value, email: f.email.value.trim(), send_portal_invitation: f.send_portal_invitation.checked };
    var made, mailed;
    submitting(form, api("POST", programPath("/partners"), body).then(function (res) { made = res.data; mailed = res.portal_invitation_sent; })).then(function (ok) {
      if (!ok) return;
      form.reset();
      ledger.partners = null; // the commissions' partner names and filter read them again
      var portal = window.location.origin + "/partners";
      if (made.status !== "approved") {
        notice(made.name + " was already in this program (" + label("PartnerStatus", made.status) + "): nothing changed, and no mail was sent.");
      } else if (mailed) {
        notice(made.name + " is a partner of this program, and was mailed the terms and the portal's address (" + portal +
          "). Create a referral link for them under Links.");
      } else {
        notice(made.name + " is a partner of this program; no mail was sent. Create a referral link for them under Links; they can sign in to " +
          portal + " with " + made.email + " to see it.");
      }
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


  // --- commissions and payouts (the ledger) --------------------------------------------------------
  //
  // The Commissions and Payouts views read and act through the ledger's routes
  // (docs/rules.md#the-ledger-and-payouts). Amounts arrive as integer minor units and are shown with money().
  // Every action is a POST with an Idempotency-Key (act). Buttons exist only for the roles that may use them:
  // commissions:write approves and rejects, payouts:write creates payouts and marks them paid or failed; a
  // role that only reads (analyst) sees the lists, the balances and the exports.

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

  // The commissions' queues: what awaits a member's approval (pending, its hold ended), what waits for its
  // hold, and every commission (with the status filter). The view opens on To approve.
  var QUEUES = {
    to_approve: { status: "pending", hold: "ended", note: "Pending commissions whose hold has ended: approve or reject them.",
      empty: "Nothing to approve: no pending commission has come out of its hold." },
    in_hold: { status: "pending", hold: "in_hold", note: "Pending commissions still in their hold: approving one now releases its hold.",
      empty: "No commission is in its hold." },
    all: { note: "Every commission, in any status.", empty: "" },
  };

  function showQueue() {
    var q = ledger.c.queue;
    document.querySelectorAll("#c-queues button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-queue") === q));
    });
    $("c-queue-note").textContent = QUEUES[q].note;
    $("c-status-field").hidden = q !== "all"; // the queues choose the status themselves
  }

  function startLedger() {
    labelOptions($("c-status"), "CommissionStatus");
    labelOptions($("p-status"), "PayoutStatus");
    document.querySelectorAll("#c-queues button").forEach(function (b) {
      b.addEventListener("click", function () {
        ledger.c.queue = b.getAttribute("data-queue");
        showQueue();
        firstPage(ledger.c);
        refreshCommissions().catch(function (err) { panelNotice("commissions", err.message, true); });
      });
    });
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
      c: { queue: "to_approve", filters: { status: "", partner: "", from: "", to: "" }, cursors: [""], index: 0, next: null, selected: {} },
      p: { status: "", cursors: [""], index: 0, next: null },
      partners: null,
    };
    ["c-filters", "p-filters", "p-create"].forEach(function (id) { $(id).reset(); });
    showQueue();
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
        if (state.program.id === id) partnerOptions($("c-partner"), res.data);
        return byID;
      });
      p.catch(function () { if (ledger.partners === p) ledger.partners = null; });
      ledger.partners = p;
    }
    return ledger.partners;
  }

  function approvable(c) { return c.status === "pending"; }
  // inHold: the commission's hold has not ended; approving it then releases the hold (said on its button).
  // In the queues the server has said so, by its clock; in All the page reads available_on.
  function inHold(c) {
    if (ledger.c.queue !== "all") return ledger.c.queue === "in_hold";
    return c.available_on && new Date(c.available_on).getTime() > Date.now();
  }
  function rejectable(c) { return approvable(c) || c.status === "approved"; }

  function refreshCommissions() {
    if (!canRead("commissions", ["c-filters", "commissions", "c-pager"])) {
      $("c-bulk").hidden = true;
      return Promise.resolve();
    }
    var write = !!state.actions["commissions:write"];
    $("c-bulk").hidden = !write;
    document.querySelectorAll("#commissions thead .pick, #commissions thead .acts").forEach(function (th) { th.hidden = !write; });
    var c = ledger.c, f = c.filters, queue = QUEUES[c.queue];
    var q = query({
      status: queue.status || f.status, hold: queue.hold, partner_id: f.partner, created_from: f.from && f.from + "T00:00:00Z",
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
        var filtered = (c.queue === "all" && f.status) || f.partner || f.from || f.to;
        body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 8, "class": "muted" },
          filtered ? "No commissions match these filters." : queue.empty || "No commissions yet: a sale referred by a partner makes one."));
      }
      pageInfo("c-page-info", c, res.data.length, "commission", "commissions");
      $("commissions").setAttribute("data-queue", c.queue); // the queue the rows shown are of
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
    st.appendChild(el("span", { "class": "badge status-" + x.status }, label("CommissionStatus", x.status)));
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
          p.status ? "No " + label("PayoutStatus", p.status) + " payouts." : "No payouts yet."));
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
    st.appendChild(el("span", { "class": "badge status-" + x.status }, label("PayoutStatus", x.status)));
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
    finish("payouts", Promise.all([act(programPath("/payouts"), currency ? { currency: currency } : {}), partners()]).then(function (r) {
      var res = r[0], byID = r[1], made = res.data;
      var said = made.length ? "Created " + plural(made.length, "payout", "payouts") + ": " + made.map(function (x) {
        return money(x.amount_cents, x.currency) + " to " + x.partner_name;
      }).join(", ") + "." : "";
      // What the run did not pay, and why: the answer's carried_over.
      var carried = (res.carried_over || []).map(function (c) {
        var who = (byID[c.partner_id] || {}).name || "partner " + c.partner_id;
        return c.reason === "below_minimum" ?
          money(c.amount_cents, c.currency) + " to " + who + " (under the program's minimum payout)" :
          who + "'s " + c.currency + " commissions (the clawbacks they owe take all of them)";
      });
      if (carried.length) said += (said ? " " : "") + "Carried over to a later payout: " + carried.join(", ") + ".";
      return said || "No payout due" + (currency ? " in " + currency : "") + ": no partner's approved total, less any clawback owed, reaches the program's payout minimum.";
    })).then(function () { button.disabled = false; });
  }


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
    startViews();
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
      var wanted = addressNumber(window.location.hash, "program");
      var first = progs.filter(function (p) { return p.id === wanted; })[0] || progs[0];
      $("program").value = first.id;
      choose(first.id);
    }).catch(fail);
    setInterval(function () { if (!document.hidden) refreshView(); }, REFRESH_MS);
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
    var before = state.program;
    var p = state.me.programs.filter(function (x) { return x.id === id; })[0];
    var ws = state.me.workspaces.filter(function (w) { return w.advertiser_id === p.advertiser_id; })[0];
    state.program = p;
    state.page = 1;
    state.actions = {};
    ws.actions.forEach(function (a) { state.actions[a] = true; });
    // The view stays when another program is chosen; the page's first program opens the address's view.
    var view = state.view ? viewNamed("#view=" + state.view) : viewNamed(window.location.hash);
    if (!state.view) state.partner = addressNumber(window.location.hash, "partner");
    // Another program has none of this one's partners: its Partners view instead of the partner's page.
    if (before && before.id !== id && view.name === "partner") view = viewNamed("#view=partners");
    $("role").textContent = ws.role;
    $("role-part").hidden = !ws.role; // no separator before nothing (an account without a workspace)
    $("program-name").textContent = p.name;
    $("program-domain").textContent = p.domain;
    showView(view);
    $("new-program-open").hidden = !creatingWorkspace();
    notice("");
    // data-loaded tells (tests, scripts) when the program's first load has finished, failed or not.
    document.body.removeAttribute("data-loaded");
    loadViews().catch(fail).then(function () {
      document.body.setAttribute("data-loaded", String(id));
    });
  }


  // --- views ---------------------------------------------------------------------------------------

  // The page shows one view at a time: the panels marked with its name (data-view). Each has an address of
  // its own (#program=<id>&view=<name>): the navigation's links change it, so the back button and a
  // reload keep the place. VIEWS is the one table of the views: their names, and what each does when the
  // page starts (start), when a program is chosen (reset, then load, given the program's partners read
  // once for the views that name them), when the navigation opens it (open, else refresh: what others
  // changed meanwhile, a partner's new link, a sale's commission), and while it is shown (refresh: every
  // REFRESH_MS; a view with forms to fill has none, so that nothing typed is redrawn away). A view not
  // shown asks the server nothing.
  var VIEWS = [
    { name: "overview", start: startPerformance,
      load: function () { return Promise.all([refreshTerms(), refreshReadiness(), refreshPerformance()]); },
      refresh: function () { return Promise.all([refreshReadiness(), refreshPerformance()]); } },
    // The ledger's two views start, reset and load together (one set of balances).
    { name: "commissions", start: startLedger, reset: resetLedger, load: refreshLedger, open: refreshLedger },
    { name: "payouts", open: refreshLedger },
    { name: "partners", load: function (listed) { return refreshPartners(listed); }, open: function () { return refreshPartners(); } },
    // A partner's page: reached from their name, marked as Partners in the navigation.
    { name: "partner", nav: "partners", reset: resetPartnerPage, load: function (listed) { return refreshPartnerPage(listed); },
      refresh: function () { return refreshPartnerPage(); } },
    { name: "customers", start: startCustomers, reset: resetCustomers,
      load: function (listed) { return refreshCustomers(listed).catch(function (err) { panelNotice("customers", err.message, true); }); },
      open: function () { return refreshCustomers(programPartners()); }, refresh: function () { return refreshCustomers(); } },
    { name: "links", load: function (listed) { return refreshLinks(listed); }, open: function () { return refreshLinks(); } },
    { name: "events", load: refreshActivity, refresh: refreshActivity },
    { name: "webhooks", start: startWebhooks, reset: resetWebhooks, load: refreshEndpoints },
    { name: "install", start: startInstall, load: function () { return Promise.all([refreshInstall(), refreshKey(), refreshProcessor()]); } },
    { name: "settings", start: startManage, reset: function () { panelNotice("settings", ""); } },
    { name: "team", reset: function () { panelNotice("team", ""); }, load: refreshTeam }
  ];

  // viewNamed is the view of the address's name, else the overview.
  function viewNamed(hash) {
    var name = (hash.match(/[#&]view=([a-z]+)/) || [])[1];
    return VIEWS.filter(function (v) { return v.name === name; })[0] || VIEWS[0];
  }

  // addressNumber is the id the address names under key (program, partner); 0 when it names none.
  function addressNumber(hash, key) { return Number((hash.match(new RegExp("[#&]" + key + "=(\\d+)")) || [])[1]) || 0; }

  function address(view) {
    return view === "partner" ? partnerAddress(state.partner) : "#program=" + state.program.id + "&view=" + view;
  }

  // showView shows the view's panels and no other view's, and marks its link in the navigation; the
  // address names it (an address of no view is replaced by the overview's).
  function showView(view) {
    state.view = view.name;
    if (window.location.hash !== address(view.name)) history.replaceState(null, "", address(view.name));
    Array.prototype.forEach.call(document.querySelectorAll("main [data-view]"), function (p) {
      p.hidden = p.getAttribute("data-view") !== view.name;
    });
    Array.prototype.forEach.call(document.querySelectorAll("#views a"), function (a) {
      a.href = address(a.getAttribute("data-view"));
      if (a.getAttribute("data-view") === (view.nav || view.name)) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    });
    $("views").hidden = false;
  }

  function startViews() {
    startCards();
    VIEWS.forEach(function (v) { if (v.start) v.start(); });
    // A link of the navigation, the back button or an address typed in: another program, or another view.
    window.addEventListener("hashchange", function () {
      if (!state.program) return;
      var id = addressNumber(window.location.hash, "program");
      if (id && id !== state.program.id && state.me.programs.some(function (p) { return p.id === id; })) {
        $("program").value = id;
        state.view = viewNamed(window.location.hash).name;
        choose(id);
        return;
      }
      var view = viewNamed(window.location.hash), partner = addressNumber(window.location.hash, "partner");
      if (view.name !== state.view || (view.name === "partner" && partner !== state.partner)) {
        if (view.name === "partner") {
          state.partner = partner;
          resetPartnerPage();
        }
        showView(view);
        window.scrollTo(0, 0);
        refreshView(true);
      }
    });
  }

  // refreshView refreshes the view shown (opened: just opened by the navigation), unless a periodic
  // refresh would overlap one under way.
  function refreshView(opened) {
    var view = viewNamed("#view=" + state.view), read = opened ? view.open || view.refresh : view.refresh;
    if (!read || !state.program || (state.busy && !opened)) return;
    state.busy = true;
    read().catch(function () {}).then(function () { state.busy = false; });
  }

  // loadViews resets every view for the chosen program and loads it.
  function loadViews() {
    VIEWS.forEach(function (v) { if (v.reset) v.reset(); });
    var listed = programPartners();
    return Promise.all(VIEWS.map(function (v) { return v.load ? v.load(listed) : null; }));
  }


  // The dashboard's state and constants, beside the helpers it shares with the partner portal (pkg/webui).
  var LOGIN = "/dashboard/login";
  var PAGE_SIZE = 20;
  var REFRESH_MS = 5000;
  // The API calls a sale event a conversion; the page says sales, as the counts do.
  var SERIES = [["click", "clicks", "Clicks"], ["lead", "leads", "Leads"], ["conversion", "conversions", "Sales"]];
  // A program's readiness state, in words.
  var LEDGER_PAGE_SIZE = 25;
  var state = { me: null, program: null, actions: {}, page: 1, filters: { eventType: "", from: "", to: "", test: false }, busy: false };

  // latest answers a read with null when a newer read of the same kind was sent meanwhile, so that a slow
  // answer (a refresh started before a filter changed) never overwrites a newer one, nor its failure a
  // newer success.
  var reads = {};
  function latest(kind, path) {
    var n = reads[kind] = (reads[kind] || 0) + 1;
    return api("GET", path).then(function (res) { return n === reads[kind] ? res : null; },
      function (err) { if (n === reads[kind]) throw err; return null; });
  }

  // partnerOptions lists the partners in a filter's select, keeping the choice when it is still there.
  function partnerOptions(sel, list) {
    var keep = sel.value;
    sel.textContent = "";
    sel.appendChild(el("option", { value: "" }, "All"));
    list.forEach(function (x) { sel.appendChild(el("option", { value: x.id }, x.name)); });
    sel.value = keep;
    if (sel.value !== keep) sel.value = "";
  }

  function fmtTime(iso) { return iso.replace("T", " ").replace(/(\.\d+)?Z$/, ""); }


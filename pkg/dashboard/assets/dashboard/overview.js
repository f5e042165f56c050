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
      $("readiness-state").textContent = label("ReadinessState", r.state);
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


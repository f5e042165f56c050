  // --- partners ------------------------------------------------------------------------------------
  //
  // The program's partners with their enrollment status and events, the brand's moves on them (approve or
  // reject an application, ban an approved partner, with an optional reason), and invitations by email
  // (send, resend, cancel). Names, emails and reasons are others' text: set as text only.

  // programPartners reads the program's partners once for the views that show them together (the Partners
  // view and the links' owners): each list counts every partner's events.
  function programPartners() { return api("GET", "/api/v1/programs/" + state.program.id + "/partners"); }

  // refreshPartners shows the partners (read again unless given) and the invitations.
  function refreshPartners(listed) {
    var id = state.program.id, canWrite = !!state.actions["partners:write"];
    $("invite").hidden = !canWrite;
    $("add-partner").hidden = !canWrite;
    return Promise.all([listed || programPartners(), api("GET", "/api/v1/programs/" + id + "/invitations")]).then(function (r) {
      if (state.program.id !== id) return;
      var body = document.querySelector("#partners tbody");
      body.textContent = "";
      r[0].data.forEach(function (p) {
        if (p.synthetic) return; // the chain's fixture partner is no one's to approve or ban
        var tr = el("tr", { "data-partner": p.id, "data-status": p.status });
        var who = tr.appendChild(el("td", {}));
        who.appendChild(partnerLink(p.id, p.name));
        who.appendChild(document.createTextNode(" <" + p.email + ">"));
        var st = el("td", {}, label("PartnerStatus", p.status));
        if (p.status_reason) st.appendChild(el("span", { "class": "muted" }, " (" + p.status_reason + ")"));
        tr.appendChild(st);
        tr.appendChild(el("td", {}, String(p.stats.clicks)));
        tr.appendChild(el("td", {}, String(p.stats.leads)));
        tr.appendChild(el("td", {}, String(p.stats.sales)));
        var act = el("td", {});
        var moves = { pending: ["approve", "reject"], approved: ["ban"] }[p.status] || [];
        if (canWrite && moves.length) {
          var reason = el("input", { type: "text", maxlength: "500", placeholder: "reason (optional)", "aria-label": "Reason for " + p.name, "class": "reason" });
          if (moves[0] !== "approve") act.appendChild(reason);
          moves.forEach(function (m) {
            var b = el("button", { type: "button", "data-action": m }, m.charAt(0).toUpperCase() + m.slice(1));
            b.addEventListener("click", function () { movePartner(p, m, reason.value.trim(), b); });
            act.appendChild(b);
          });
          if (moves[0] === "approve") act.insertBefore(reason, act.children[1]);
        }
        tr.appendChild(act);
        body.appendChild(tr);
      });
      if (!body.children.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 6, "class": "muted" }, "No partners yet: add or invite one above."));
      var inv = document.querySelector("#invitations tbody");
      inv.textContent = "";
      r[1].data.forEach(function (x) {
        var tr = el("tr", { "data-invitation": x.id, "data-status": x.status });
        tr.appendChild(el("td", {}, x.email));
        tr.appendChild(el("td", {}, label("InvitationStatus", x.status)));
        tr.appendChild(el("td", {}, plural(x.sent_count, "time", "times")));
        tr.appendChild(el("td", {}, x.expires_at.slice(0, 10)));
        var act = el("td", {});
        if (canWrite && (x.status === "sent" || x.status === "expired")) {
          [["resend", "Resend"], ["cancel", "Cancel"]].forEach(function (m) {
            var b = el("button", { type: "button", "data-action": m[0] }, m[1]);
            b.addEventListener("click", function () { invitationAction(x, m[0], b); });
            act.appendChild(b);
          });
        }
        tr.appendChild(act);
        inv.appendChild(tr);
      });
      if (!r[1].data.length) inv.appendChild(el("tr", {})).appendChild(el("td", { colspan: 5, "class": "muted" }, "No invitations sent."));
    });
  }

  function movePartner(p, move, reason, button) {
    if (move === "ban" && !window.confirm("Ban " + p.name + "? Their links stop working and their commissions not yet in a payout are rejected. This cannot be undone.")) return;
    button.disabled = true;
    var body = move !== "approve" && reason ? { reason: reason } : undefined;
    api("POST", programPath("/partners/" + p.id + "/" + move), body).then(function (res) {
      notice(p.name + " is now " + label("PartnerStatus", res.data.status) + ".");
      var listed = programPartners();
      return Promise.all([refreshPartners(listed), refreshLinks(listed)]);
    }).catch(fail).then(function () { button.disabled = false; });
  }

  function invitationAction(x, action, button) {
    button.disabled = true;
    var call = action === "resend" ? api("POST", programPath("/invitations/" + x.id + "/resend")) : api("DELETE", programPath("/invitations/" + x.id));
    call.then(function () {
      notice(action === "resend" ? "The invitation to " + x.email + " was sent again with a new link." : "The invitation to " + x.email + " is canceled.");
      return refreshPartners();
    }).catch(fail).then(function () { button.disabled = false; });
  }

  function invite(e) {
    e.preventDefault();
    var body = { email: $("invite-email").value.trim() };
    if ($("invite-name").value.trim()) body.name = $("invite-name").value.trim();
    if ($("invite-message").value.trim()) body.message = $("invite-message").value.trim();
    api("POST", programPath("/invitations"), body).then(function () {
      notice("Invitation sent to " + body.email + ": the link in the mail is valid 30 days.");
      $("invite").reset();
      return refreshPartners();
    }).catch(fail);
  }


  // --- links ---------------------------------------------------------------------------------------

  // refreshLinks shows the links with their partners (read again unless given).
  function refreshLinks(listed) {
    var id = state.program.id;
    return Promise.all([listed || programPartners(), api("GET", "/api/v1/programs/" + id + "/links")]).then(function (r) {
      var partners = {};
      r[0].data.forEach(function (p) { partners[p.id] = p; });
      fillLinkPartners(r[0].data);
      var body = document.querySelector("#links tbody");
      body.textContent = "";
      var canWrite = !!state.actions["links:write"];
      r[1].data.forEach(function (l) {
        var p = partners[l.partner_id];
        var tr = el("tr", { "data-link": l.short_link });
        var who = p ? p.name + " <" + p.email + ">" : "";
        if (p && p.synthetic) who += " — used by reftrack test --chain";
        tr.appendChild(el("td", {}, who));
        tr.appendChild(el("td", {}, l.short_link));
        var url = tr.appendChild(el("td", { "class": "details" }));
        url.appendChild(el("span", { "class": "url" }, l.referral_url));
        url.appendChild(document.createTextNode(" "));
        url.appendChild(el("button", { type: "button", "class": "copy", "data-text": l.referral_url, "aria-label": "Copy the referral URL of link " + l.short_link }, "Copy"));
        var box = el("input", { type: "checkbox", role: "switch", "aria-label": "Link " + l.short_link + " on" });
        box.checked = l.enabled;
        box.disabled = !canWrite;
        if (!canWrite) box.title = "Your role cannot switch links";
        box.addEventListener("change", function () { switchLink(l, box); });
        var td = el("td", {});
        td.appendChild(box);
        td.appendChild(el("span", { "class": "switch-state" }, l.enabled ? " on" : " off"));
        tr.appendChild(td);
        body.appendChild(tr);
      });
      if (!r[1].data.length) body.appendChild(el("tr", {})).appendChild(el("td", { colspan: 4, "class": "muted" }, "No links yet."));
    });
  }

  function switchLink(link, box) {
    var want = box.checked;
    box.disabled = true;
    api("PATCH", "/api/v1/links/" + link.id, { enabled: want }).then(function (res) {
      link.enabled = res.data.enabled;
      box.nextSibling.textContent = link.enabled ? " on" : " off";
      notice("Link " + link.short_link + " is now " + (link.enabled ? "on" : "off") + ".");
    }).catch(function (err) {
      box.checked = !want;
      fail(err);
    }).then(function () { box.disabled = false; });
  }


  // --- API key -------------------------------------------------------------------------------------

  function refreshKey() {
    $("regenerate").hidden = !state.actions["keys:regenerate"];
    $("new-key").hidden = true;
    return showKey();
  }

  // showKey reads the key's masked form and shows it.
  function showKey() {
    return api("GET", "/api/v1/programs/" + state.program.id + "/api-key").then(function (res) {
      $("api-key").textContent = res.data.masked;
      $("key-meta").textContent = "created " + fmtTime(res.data.created_at);
    });
  }

  function regenerate() {
    if (!window.confirm("Regenerate the API key? The current key stops working at once.")) return;
    $("regenerate").disabled = true;
    api("POST", "/api/v1/programs/" + state.program.id + "/api-key").then(function (res) {
      $("new-key-value").textContent = res.data.api_key;
      $("new-key").hidden = false;
      return showKey();
    }).catch(fail).then(function () { $("regenerate").disabled = false; });
  }


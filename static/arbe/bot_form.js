// The add-bot form (templates/houses/members.html): choosing a provider offers its models
// and suggests a key variable the server's rule accepts (houses/bot_choices.py).
(function () {
  "use strict";
  function setUp() {
    var data = document.getElementById("bot-providers");
    var provider = document.getElementById("bot-provider");
    if (!data || !provider) return;
    var providers = {};
    try { providers = JSON.parse(data.textContent); } catch (e) { return; }
    var model = document.getElementById("bot-model"), list = document.getElementById("bot-models");
    var key = document.getElementById("bot-key");
    function sync() {
      var chosen = providers[provider.value];
      var models = chosen ? chosen.models : [];
      list.replaceChildren.apply(list, models.map(function (id) {
        var option = document.createElement("option");
        option.value = id;
        return option;
      }));
      if (chosen && models.indexOf(model.value) < 0) model.value = models.length === 1 ? models[0] : "";
      model.placeholder = !chosen ? "pick a provider first" : models.length ? "e.g. " + models[0] : "its model id";
      key.placeholder = !chosen ? "" : chosen.key ? "e.g. " + chosen.key : "not needed";
    }
    provider.addEventListener("change", sync);
    sync();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

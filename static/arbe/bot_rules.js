// The line by the compose box that says which bot answers a message that mentions nobody
// (threads/bot_rules.py). "@helper answers every message while you're the only person here"
// holds while the viewer is the only person who has written and one bot has: kept current
// from the chat entries that arrive (a second person, or a second bot, ends it).
(function () {
  "use strict";
  function data(id) {
    var el = document.getElementById(id);
    try { return el ? JSON.parse(el.textContent) : null; } catch (e) { return null; }
  }
  function words(text) { return (text || "").split(" ").filter(Boolean); }

  function start() {
    var line = document.getElementById("bot-rules"), entries = document.getElementById("entries");
    if (!line || !entries) return;
    var solo = line.querySelector(".solo"), handle = line.querySelector(".solo-handle");
    var viewer = document.body.dataset.viewer;
    var bots = data("conversation-bots") || {}, everything = data("everything-bots") || [];
    var people = new Set(words(line.dataset.people)), spoke = new Set(words(line.dataset.bots));

    function render() {
      var only = spoke.size === 1 ? bots[Array.from(spoke)[0]] : null;
      var alone = Array.from(people).every(function (p) { return p === viewer; });
      var show = !!only && alone && everything.indexOf(only) < 0;
      if (show) handle.textContent = only;
      solo.hidden = !show;
    }

    function note(node) {
      if (!(node instanceof Element) || !node.matches(".entry.chat") || node.matches(".pending")) return;
      var author = node.dataset.author;
      if (!author) return;
      (node.matches(".from-bot") ? spoke : people).add(author);
    }

    new MutationObserver(function (changes) {
      changes.forEach(function (change) { change.addedNodes.forEach(note); });
      render();
    }).observe(entries, { childList: true });
    render();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// Opening a search result: /threads/<id>/#entry-<entryId> scrolls to the message and
// highlights it; when it isn't on the page, a note says so.
(function () {
  "use strict";
  var PREFIX = "#entry-";

  function note(text) {
    var main = document.querySelector("main");
    if (!main || document.getElementById("hit-missing")) return;
    var p = document.createElement("p");
    p.id = "hit-missing";
    p.className = "flash hit-missing";
    p.setAttribute("role", "status");
    p.textContent = text;
    main.insertBefore(p, main.firstChild);
  }

  function showHit() {
    if (!document.body.classList.contains("thread-page")) return;
    var hash = window.location.hash;
    if (hash.indexOf(PREFIX) !== 0) return;
    var id = decodeURIComponent(hash.slice(1));
    var entry = document.getElementById(id);
    if (!entry) {
      note("That message isn't on this page: it was deleted, or it is older than the part of the thread shown here.");
      return;
    }
    document.querySelectorAll(".entry.hit").forEach(function (el) { el.classList.remove("hit"); });
    entry.classList.add("hit");
    entry.setAttribute("tabindex", "-1");
    entry.scrollIntoView({ block: "center" });
    entry.focus({ preventScroll: true });
  }

  document.addEventListener("DOMContentLoaded", showHit);
  // The browser's own jump to the fragment puts the message at the very top, after
  // DOMContentLoaded: centre it again once the page has loaded.
  window.addEventListener("load", showHit);
  window.addEventListener("hashchange", showHit);
})();

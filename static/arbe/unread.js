// "New messages": a divider above the first message the person hadn't read when the
// page was rendered (#entries[data-first-unread]); the server has already marked it read.
(function () {
  "use strict";
  function divide() {
    var entries = document.getElementById("entries");
    var id = entries && entries.dataset.firstUnread;
    if (!id || document.getElementById("unread-divider")) return;
    var first = document.getElementById("entry-" + id);
    if (!first) return;
    var divider = document.createElement("div");
    divider.id = "unread-divider";
    divider.className = "unread-divider";
    divider.setAttribute("role", "separator");
    divider.setAttribute("aria-label", "New messages");
    var label = document.createElement("span");
    label.textContent = "New messages";
    divider.appendChild(label);
    first.parentNode.insertBefore(divider, first);
  }
  document.addEventListener("DOMContentLoaded", divide);
})();

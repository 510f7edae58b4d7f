// The tab title carries the unread count, "(3) Harbour · arbe", kept live: the server
// sends #unread-total (data-unread) with every row it renders over the page's socket.
(function () {
  "use strict";
  var PREFIX = /^\(\d[\d,]*\) /;
  function refresh() {
    var total = document.getElementById("unread-total");
    if (!total) return;
    var n = Number(total.dataset.unread) || 0, base = document.title.replace(PREFIX, "");
    document.title = n > 0 ? "(" + n.toLocaleString() + ") " + base : base;
  }
  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:oobAfterSwap", refresh);
  document.addEventListener("htmx:wsAfterMessage", refresh);
})();

// Relative times ("5 min ago") kept fresh, with the exact date on hover in the reader's zone.
(function () {
  "use strict";
  var MIN = 60e3, HOUR = 60 * MIN, DAY = 24 * HOUR;
  function ago(date, now) {
    var ms = Math.max(now - date, 0);
    if (ms < MIN) return "just now";
    if (ms < HOUR) return Math.floor(ms / MIN) + " min ago";
    if (ms < DAY) return Math.floor(ms / HOUR) + " h ago";
    if (ms < 2 * DAY) return "yesterday";
    if (ms < 7 * DAY) return Math.floor(ms / DAY) + " days ago";
    var opts = { day: "numeric", month: "short" };
    if (date.getFullYear() !== new Date(now).getFullYear()) opts.year = "numeric";
    return date.toLocaleDateString(undefined, opts);
  }
  function refresh() {
    var now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach(function (el) {
      var date = new Date(el.getAttribute("datetime"));
      if (isNaN(date)) return;
      el.textContent = ago(date, now);
      el.title = date.toLocaleString(undefined, { dateStyle: "full", timeStyle: "short" });
    });
  }
  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:oobAfterSwap", refresh);
  setInterval(refresh, 30e3);
})();

// One rule for every time on every page: the server renders <time datetime=… data-relative>
// (UTC text until this runs); here it becomes the reader's own zone and locale, relative
// while recent ("2 min ago", kept fresh), with the exact time on hover.
//   data-relative        lists (houses, threads, search, members, tokens, board):
//                        relative up to a week, then the date; the future reads "in 3 days"
//   data-relative="clock" a thread's messages: relative for the first hour, then the clock
//                        time (the day is in the divider above)
// It also tells the server the reader's zone (the "tz" cookie): "today" in a search is theirs.
(function () {
  "use strict";
  var MIN = 60e3, HOUR = 60 * MIN, DAY = 24 * HOUR;
  // A zone chosen on the account page is pinned (the "tz_pinned" cookie): times follow it.
  var pinned = /(?:^|; )tz_pinned=1/.test(document.cookie) && (document.cookie.match(/(?:^|; )tz=([^;]+)/) || [])[1];
  var zone = pinned ? { timeZone: decodeURIComponent(pinned) } : {};
  function format(options) {
    try { return new Intl.DateTimeFormat(undefined, Object.assign({}, options, zone)); }
    catch (e) { return new Intl.DateTimeFormat(undefined, options); }
  }
  var exact = format({ dateStyle: "full", timeStyle: "short" });
  var clock = format({ timeStyle: "short" });

  function day(date, now) {
    var opts = { day: "numeric", month: "short" };
    if (date.getFullYear() !== new Date(now).getFullYear()) opts.year = "numeric";
    return date.toLocaleDateString(undefined, opts);
  }

  function calendarDays(date, now) {
    var a = new Date(date), b = new Date(now);
    a.setHours(0, 0, 0, 0);
    b.setHours(0, 0, 0, 0);
    return Math.round((b - a) / DAY);
  }

  function ago(date, now, mode) {
    var ms = now - date;
    if (ms < -MIN) return ahead(-ms, date, now);
    ms = Math.max(ms, 0);
    if (ms < MIN) return "just now";
    if (ms < HOUR) return Math.floor(ms / MIN) + " min ago";
    if (mode === "clock") return clock.format(date);
    var days = calendarDays(date, now);
    if (days === 0) return Math.floor(ms / HOUR) + " h ago";
    if (days === 1) return "yesterday";
    if (days < 7) return days + " days ago";
    return day(date, now);
  }

  function ahead(ms, date, now) {
    if (ms < HOUR) return "in " + Math.ceil(ms / MIN) + " min";
    var days = -calendarDays(date, now);
    if (days === 0) return "in " + Math.round(ms / HOUR) + " h";
    if (days === 1) return "tomorrow";
    if (days <= 7) return "in " + days + " days";
    return day(date, now);
  }

  function refresh() {
    var now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach(function (el) {
      var date = new Date(el.getAttribute("datetime"));
      if (isNaN(date)) return;
      // A grouped message's time sits in a narrow gutter: always the clock there.
      var grouped = el.dataset.relative === "clock" && el.closest(".grouped");
      var text = grouped ? clock.format(date) : ago(date, now, el.dataset.relative);
      if (el.textContent !== text) el.textContent = text;
      el.title = exact.format(date);
    });
  }

  function rememberZone() {
    if (pinned) return; // chosen on the account page
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("tz=" + zone) === -1) {
      document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    }
  }

  rememberZone();
  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:oobAfterSwap", refresh);
  document.addEventListener("htmx:afterSettle", refresh);
  document.addEventListener("htmx:wsAfterMessage", refresh);
  setInterval(refresh, 30e3);
})();

// The thread page's history (docs/history.md): older windows load above when the top
// sentinel nears the view, a gap below a linked message fills as it nears, a link to a
// message not on the page opens the page around it, and a long-open page drops far-off
// messages above (re-loadable by scrolling up). Windows are keyed by stored stream
// positions (an entry id the server keeps a mark or a location for), never times or pages.
(function () {
  "use strict";
  var MARGIN_PX = 600; // start loading this far before the sentinel is seen
  var MAX_NODES = 900; // messages, lines and transcripts kept in the scroller…
  var KEEP_NODES = 400; // …and what is left when a pinned page drops the oldest

  var scroller = document.getElementById("entries");
  if (!scroller || !window.htmx) return;
  var url = scroller.dataset.windowUrl;
  var loading = null; // {edge, top, height} while a window is in flight: one at a time
  var gone = new Set(); // entries deleted live: a window fetched later may still hold them

  // -- a link to a message -----------------------------------------------------------
  function target() {
    var m = /^#entry-(.+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : "";
  }
  function showLinked(el) {
    document.querySelectorAll(".entry.linked").forEach(function (e) { e.classList.remove("linked"); });
    el.scrollIntoView({ block: "center" });
    el.classList.add("linked");
  }
  function openLinked() {
    var id = target();
    if (!id) return;
    var el = document.getElementById("entry-" + id);
    if (el) return showLinked(el);
    var here = new URL(location.href);
    if (here.searchParams.get("around") === id) return; // not found around it either
    here.searchParams.set("around", id);
    location.replace(here.toString()); // the server opens the windows around it
  }
  if (target() && !document.getElementById("entry-" + target())) openLinked();
  window.addEventListener("hashchange", openLinked);

  // -- loading windows ---------------------------------------------------------------
  function query(edge) {
    var d = edge.dataset, q = new URLSearchParams();
    ["upto", "before", "after", "until"].forEach(function (k) { if (d[k]) q.set(k, d[k]); });
    return url + "?" + q.toString();
  }
  function load(edge) {
    if (loading || !edge.isConnected) return;
    loading = { edge: edge, older: edge.id === "older", top: scroller.scrollTop, height: scroller.scrollHeight };
    edge.setAttribute("aria-busy", "true");
    htmx.ajax("GET", query(edge), { target: edge, swap: "outerHTML" }).then(done, done);
  }

  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (!mine(evt)) return;
    // Snapshot right before the swap: no live frame lands between this and afterSwap.
    loading.top = scroller.scrollTop;
    loading.height = scroller.scrollHeight;
  });
  // The swapped-out sentinel is detached, so its afterSwap never reaches the document:
  // finish when the request's promise settles, in the same task as the swap.
  function done() {
    if (!loading || loading.edge.isConnected) return;
    var was = loading;
    gone.forEach(function (id) {
      var el = document.getElementById("entry-" + id);
      if (el) el.remove();
    });
    if (window.arbeSettle) window.arbeSettle();
    if (was.older) {
      // What was in view stays in view: the new height goes above it. Set by hand: Safari
      // has no scroll anchoring and Chrome's is off at scrollTop 0, where a fling lands.
      scroller.scrollTop = was.top + (scroller.scrollHeight - was.height);
    }
    loading = null;
    watch();
  }
  document.addEventListener("htmx:responseError", function (evt) {
    if (!mine(evt)) return;
    var edge = loading.edge;
    loading = null;
    edge.removeAttribute("aria-busy");
    edge.classList.add("stale");
    edge.textContent = "Earlier messages moved. ";
    var again = document.createElement("a");
    again.href = location.pathname;
    again.textContent = "Reload";
    edge.appendChild(again);
  });
  document.addEventListener("htmx:sendError", function (evt) {
    if (!mine(evt)) return;
    loading.edge.removeAttribute("aria-busy");
    loading = null;
    setTimeout(watch, 2000); // offline: try again when the sentinel is next seen
  });

  function mine(evt) {
    if (!loading) return false;
    var path = evt.detail.pathInfo && evt.detail.pathInfo.requestPath;
    return evt.detail.target === loading.edge || (!!path && String(path).indexOf(url) === 0);
  }

  var observer = new IntersectionObserver(function (seen) {
    seen.forEach(function (s) { if (s.isIntersecting) load(s.target); });
  }, { root: scroller, rootMargin: MARGIN_PX + "px 0px " + MARGIN_PX + "px 0px" });
  function watch() {
    observer.disconnect();
    ["older", "newer"].forEach(function (id) {
      var edge = document.getElementById(id);
      if (edge && !edge.classList.contains("stale")) observer.observe(edge);
    });
  }

  // -- live: remember deletions, keep the page light ---------------------------------
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var text = typeof evt.detail.message === "string" ? evt.detail.message : "";
    var re = /id="entry-([^"]+)" hx-swap-oob="delete"/g, m;
    while ((m = re.exec(text))) gone.add(m[1]);
  });
  document.addEventListener("htmx:wsAfterMessage", function () {
    if (scroller.children.length > MAX_NODES && !loading && atBottom()) trim();
  });

  function atBottom() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight <= 100;
  }

  // Drop the oldest messages while the reader is at the newest: cut just above a message
  // (the server finds its window from the chat index) and leave a sentinel there.
  function trim() {
    var kids = scroller.children, cut = null;
    for (var i = kids.length - KEEP_NODES; i < kids.length; i++) {
      var el = kids[i];
      if (el.matches(".entry.chat:not(.pending):not(.failed)") && el.id.indexOf("entry-") === 0) {
        cut = el;
        break;
      }
    }
    if (!cut) return;
    while (scroller.firstElementChild !== cut) scroller.firstElementChild.remove();
    var edge = document.createElement("div");
    edge.id = "older";
    edge.className = "history-edge";
    edge.dataset.before = cut.id.slice("entry-".length);
    edge.textContent = "Loading earlier messages…";
    scroller.insertBefore(edge, cut);
    if (window.arbeSettle) window.arbeSettle();
    scroller.scrollTop = scroller.scrollHeight;
    watch();
  }

  if (target()) {
    var linked = document.getElementById("entry-" + target());
    if (linked) showLinked(linked);
  }
  watch();
})();

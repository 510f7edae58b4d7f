// What is yours, wherever you are (docs/notifications.md): the sidebar's live rows and its
// drawer on phones, and a desktop notification for each new mention or reply the page's
// socket announces (#yours-notice), shown once across all open tabs.
(function () {
  "use strict";
  var supported = "Notification" in window;
  var SEEN_PREFIX = "arbe-notified-";
  var KEEP_MS = 24 * 60 * 60 * 1000;

  // -- the sidebar's rows: the socket puts them in #side-patch, this puts them in place ----
  function applyPatch() {
    var patch = document.getElementById("side-patch");
    var list = document.getElementById("side-threads");
    if (!patch || !list) return;
    Array.from(patch.querySelectorAll(":scope > div > li, :scope > li")).forEach(function (row) {
      var old = document.getElementById(row.id);
      if (row.hasAttribute("data-move")) {
        row.removeAttribute("data-move");
        if (old) old.remove();
        var empty = list.querySelector(":scope > .empty");
        if (empty) empty.remove();
        list.insertBefore(row, list.firstChild);
      } else if (old) {
        old.replaceWith(row);
      }
    });
    patch.textContent = "";
  }

  // -- the drawer on phones ------------------------------------------------------------
  function setDrawer(open) {
    document.body.classList.toggle("drawer-open", open);
    var toggle = document.querySelector(".drawer-toggle");
    if (toggle) toggle.setAttribute("aria-expanded", open ? "true" : "false");
    var backdrop = document.querySelector(".drawer-backdrop");
    if (backdrop) backdrop.hidden = !open;
    if (open) {
      var here = document.querySelector('#sidebar a[aria-current="page"]') || document.querySelector("#sidebar a");
      if (here) here.focus();
    }
  }
  document.addEventListener("click", function (evt) {
    var t = evt.target;
    if (!t.closest) return;
    if (t.closest(".drawer-toggle")) setDrawer(!document.body.classList.contains("drawer-open"));
    else if (t.closest(".drawer-close") || t.closest(".drawer-backdrop")) setDrawer(false);
  });
  document.addEventListener("keydown", function (evt) {
    if (evt.key === "Escape" && document.body.classList.contains("drawer-open")) setDrawer(false);
  });

  // -- one notification per message across tabs ----------------------------------------
  // Every open tab gets the notice; the first to claim the entry id shows it. The claim is
  // a check-and-set in localStorage under a Web Lock named after the entry (the lock makes
  // it atomic across tabs); without Web Locks the check-and-set alone (a rare double).
  function claimOnce(entryId, then) {
    var key = SEEN_PREFIX + entryId;
    function checkAndSet() {
      try {
        if (localStorage.getItem(key)) return false;
        localStorage.setItem(key, String(Date.now()));
      } catch (e) { /* storage refused: this tab shows it */ }
      return true;
    }
    if (navigator.locks && navigator.locks.request) {
      navigator.locks.request(key, function () { if (checkAndSet()) then(); });
    } else if (checkAndSet()) {
      then();
    }
  }
  window.arbeClaimNotice = claimOnce; // notify.js claims a thread page's own notifications here

  function forgetOld() {
    try {
      var now = Date.now();
      for (var i = localStorage.length - 1; i >= 0; i--) {
        var k = localStorage.key(i);
        if (k && k.indexOf(SEEN_PREFIX) === 0 && now - Number(localStorage.getItem(k)) > KEEP_MS) {
          localStorage.removeItem(k);
        }
      }
    } catch (e) { /* nothing to forget */ }
  }

  var lastNotice = "";
  function notice() {
    var el = document.getElementById("yours-notice");
    var id = el && el.dataset.entry;
    if (!id || id === lastNotice) return;
    lastNotice = id;
    if (el.hasAttribute("data-silent") || !supported || Notification.permission !== "granted") return;
    claimOnce(id, function () {
      var shown = new Notification(el.dataset.title, { body: el.dataset.body, tag: "entry-" + id });
      var url = el.dataset.url;
      shown.addEventListener("click", function () {
        window.focus();
        shown.close();
        if (url) window.location.assign(url);
      });
    });
  }

  // A socket that reconnected missed what happened meanwhile: fetch the sidebar fresh (its
  // rows, the other houses, the bell), as the house list starts fresh on every connect.
  var opens = 0;
  document.addEventListener("htmx:wsOpen", function () {
    opens += 1;
    var sidebar = document.getElementById("sidebar");
    if (opens > 1 && sidebar && sidebar.dataset.fresh) {
      htmx.ajax("GET", sidebar.dataset.fresh, { swap: "none" });
    }
  });

  document.addEventListener("htmx:wsAfterMessage", function () {
    applyPatch();
    notice();
  });
  document.addEventListener("DOMContentLoaded", function () {
    forgetOld();
    var current = document.querySelector('#sidebar a[aria-current="page"]');
    if (current && current.scrollIntoView) current.scrollIntoView({ block: "nearest" });
  });
})();

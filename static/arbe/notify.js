// Notifications in the browser (docs/notifications.md): the permission button, the push
// subscription (sw.js), and on a thread page the title count and a desktop notification
// for what lands while the tab is hidden. Permission is only asked for from a click.
(function () {
  "use strict";
  var supported = "Notification" in window;
  var PREFIX = /^\(\d[\d,]*\) /;

  function csrfToken() {
    var m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }

  // -- permission and push ----------------------------------------------------------------
  function showState() {
    var state = supported ? Notification.permission : "unsupported";
    document.querySelectorAll(".notify-permission").forEach(function (button) {
      button.hidden = state !== "default";
    });
    var info = document.getElementById("notify-browser");
    if (info) info.dataset.state = state;
  }

  function keyBytes(base64url) {
    var s = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(s), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function label() {
    var ua = navigator.userAgent, name = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge"
      : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "A browser";
    var os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS"
      : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : "";
    return os ? name + " on " + os : name;
  }

  // Register sw.js and send this browser's push subscription (an upsert on the server).
  function subscribePush(source) {
    var info = document.getElementById("notify-browser");
    var vapid = source && source.dataset.vapid, url = source && source.dataset.devices;
    if (!vapid || !url || !("serviceWorker" in navigator) || !("PushManager" in window)) return;
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(function (reg) {
      return reg.pushManager.getSubscription().then(function (sub) {
        return sub || reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(vapid) });
      });
    }).then(function (sub) {
      var body = sub.toJSON();
      body.label = label();
      return fetch(url, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({ endpoint: body.endpoint, keys: body.keys, label: body.label }),
      });
    }).then(function (response) {
      if (info) info.dataset.pushing = response.ok ? "yes" : "no";
    }).catch(function () {
      // No push service in this browser (or it refused): tabs still notify while open.
      if (info) info.dataset.pushing = "no";
    });
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest(".notify-permission");
    if (!button || !supported) return;
    Notification.requestPermission().then(function (state) {
      showState();
      if (state === "granted") subscribePush(document.getElementById("notify-browser") || button);
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    showState();
    var info = document.getElementById("notify-browser");
    // Already allowed (this or another visit): keep this browser's subscription current.
    if (info && supported && Notification.permission === "granted") subscribePush(info);
  });
  document.addEventListener("htmx:afterSwap", showState);

  // -- a thread page: title count and desktop notifications ----------------------------------
  var seen = null, unseen = 0;

  function viewer() { return document.body.dataset.viewer || ""; }

  // The count: what landed here while the tab was hidden, plus what is addressed to you
  // elsewhere and not read yet (the inbox bell's count).
  function setTitle() {
    var bell = document.getElementById("inbox-bell");
    var n = unseen + (bell ? Number(bell.dataset.count) || 0 : 0);
    var base = document.title.replace(PREFIX, "");
    document.title = n > 0 ? "(" + n.toLocaleString() + ") " + base : base;
  }

  function wanted(entry) {
    var bell = document.getElementById("thread-notify");
    var level = bell ? bell.dataset.effective : "mentions";
    if (level === "all") return "all";
    if (level === "nothing") return "";
    var me = viewer();
    if (entry.querySelector('.mention[data-agent="' + me + '"]')) return "mention";
    if (entry.classList.contains("from-bot")) {
      // A bot answering the last person who spoke: the one who asked it.
      var prev = entry.previousElementSibling;
      while (prev && !(prev.classList.contains("chat") && !prev.classList.contains("from-bot"))) {
        prev = prev.previousElementSibling;
      }
      if (prev && prev.dataset.author === me) return "bot";
    }
    return "";
  }

  function notify(entry, why) {
    if (!supported || Notification.permission !== "granted") return;
    var who = entry.querySelector(".who"), body = entry.querySelector(".body");
    var heading = document.querySelector(".thread-title h1");
    var where = heading ? "“" + heading.textContent.trim() + "”" : "arbe";
    var name = who ? who.textContent.trim() : "Someone";
    var title = why === "mention" ? name + " mentioned you in " + where
      : why === "bot" ? name + " replied in " + where : name + " in " + where;
    var text = body ? body.textContent.trim().replace(/\s+/g, " ").slice(0, 200) : "";
    var show = function () {
      var shown = new Notification(title, { body: text, tag: entry.id });
      shown.addEventListener("click", function () {
        window.focus();
        entry.scrollIntoView({ block: "center" });
        shown.close();
      });
    };
    // Once across tabs: another tab may show the same message from its inbox notice (yours.js).
    if (window.arbeClaimNotice) window.arbeClaimNotice(entry.id.replace(/^entry-/, ""), show);
    else show();
  }

  function scan() {
    var list = document.getElementById("entries");
    if (!list || !viewer()) return;
    setTitle();
    var entries = list.querySelectorAll(":scope > .entry.chat");
    if (seen === null) {
      seen = new Set();
      entries.forEach(function (e) { seen.add(e.id); });
      return;
    }
    entries.forEach(function (entry) {
      if (seen.has(entry.id)) return;
      seen.add(entry.id);
      if (!document.hidden || entry.dataset.author === viewer() || entry.classList.contains("pending")) return;
      unseen += 1;
      var why = wanted(entry);
      if (why) notify(entry, why);
    });
    setTitle();
  }

  document.addEventListener("DOMContentLoaded", scan);
  document.addEventListener("htmx:wsAfterMessage", scan);
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && unseen) { unseen = 0; setTitle(); }
  });
})();

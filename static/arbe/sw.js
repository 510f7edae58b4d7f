// arbe's service worker, served at /sw.js (scope: the whole site). It only shows pushes
// (notify/push.py sends them) and opens the thread a click asks for; it caches nothing.
"use strict";

self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (event) { event.waitUntil(self.clients.claim()); });

self.addEventListener("push", function (event) {
  var data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = { body: event.data.text() }; }
  event.waitUntil(self.registration.showNotification(data.title || "arbe", {
    body: data.body || "",
    tag: data.tag || undefined,
    data: { url: data.url || "/" },
  }));
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin);
  if (url.origin !== self.location.origin) url = new URL("/", self.location.origin);
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (list) {
    for (var i = 0; i < list.length; i++) {
      var open = new URL(list[i].url);
      // The thread is open already: bring it forward (it shows what landed itself).
      if (open.pathname === url.pathname && "focus" in list[i]) return list[i].focus();
    }
    return self.clients.openWindow(url.href);
  }));
});

// Live pages: exact resume for the ws extension, duplicate-free appends, the compose box.
(function () {
  "use strict";
  var NO_RETRY = /^44\d\d$/; // the app's own refusals (not a member, bad offset)

  function lastOffset() {
    var marker = document.getElementById("stream-offset");
    return marker ? marker.dataset.offset : null;
  }

  // The extension fixes the socket URL when it processes ws-connect, so every (re)connect
  // goes through here and asks from the last offset the page applied.
  htmx.createWebSocket = function (url) {
    var offset = lastOffset();
    if (offset !== null && url.indexOf("offset=") >= 0) {
      var u = new URL(url);
      u.searchParams.set("offset", offset);
      url = u.toString();
    }
    var socket = new WebSocket(url, []);
    socket.binaryType = htmx.config.wsBinaryType;
    window.arbeSocket = socket; // tests drop it to check resume
    return socket;
  };
  htmx.config.wsReconnectDelay = function (retry) {
    return Math.min(250 * Math.pow(2, retry), 5000) * (0.5 + Math.random() / 2);
  };

  document.addEventListener("htmx:wsOpen", function (evt) {
    evt.target.dataset.connected = "1";
  });
  document.addEventListener("htmx:wsClose", function (evt) {
    var target = evt.target, code = evt.detail.event.code;
    delete target.dataset.connected;
    if (NO_RETRY.test(String(code))) {
      target.dataset.closed = String(code);
      return;
    }
    // The extension retries only 1006/1011/1012/1013; a clean close resumes too.
    if ([1006, 1011, 1012, 1013].indexOf(code) < 0) {
      setTimeout(function () { evt.detail.socketWrapper.reconnect(); }, 300);
    }
  });

  // Live and catch-up can both bring an entry: keep the first, drop the copy.
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var fragment = evt.detail.fragment, target = evt.detail.target;
    if (!fragment || !target.matches("#entries, .transcript-items")) return;
    Array.from(fragment.children || []).forEach(function (child) {
      if (child.id && document.getElementById(child.id)) child.remove();
    });
    if (!fragment.children || fragment.children.length === 0) evt.detail.shouldSwap = false;
  });

  // Enter sends, Shift+Enter is a new line; mention buttons insert "@handle ".
  document.addEventListener("keydown", function (evt) {
    var box = evt.target;
    if (box.matches && box.matches("#compose textarea") && evt.key === "Enter" && !evt.shiftKey && !evt.isComposing) {
      evt.preventDefault();
      if (box.value.trim()) box.form.requestSubmit();
    }
  });
  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("[data-mention]");
    if (!button) return;
    var box = document.querySelector("#compose textarea");
    box.value = (box.value && !/\s$/.test(box.value) ? box.value + " " : box.value) + button.dataset.mention + " ";
    box.focus();
  });
})();

// Live pages: exact resume for the ws extension, duplicate-free appends; on the thread page
// the scroller, grouping, local times, the compose box (mentions, pending and failed sends),
// the connection state, the delete confirmation and the viewer's own CSS rules.
// No inline script or style anywhere: the CSP allows neither (see arbe_site/settings.py).
(function () {
  "use strict";
  var NO_RETRY = /^44\d\d$/; // the app's own refusals (not a member, bad offset)
  // Closes that mean the right to read ended (houses/revocation.py): the page says which.
  var ENDED = { 4401: "signed-out", 4403: "no-access", 4404: "no-access" };
  var GROUP_MS = 5 * 60 * 1000;
  var PIN_PX = 100;
  var SEND_TIMEOUT_MS = 10000;
  var CONN_GRACE_MS = 3000;

  function $(selector, root) { return (root || document).querySelector(selector); }
  function $$(selector, root) { return Array.from((root || document).querySelectorAll(selector)); }

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

  // -- connection state: body[data-conn] = connecting | live | reconnecting | offline | stopped
  var wrapper = null, open = false, connTimer = null;

  function setConn(state) { document.body.dataset.conn = state; }
  function laterConn() {
    // Blips are normal: say so only when the socket has stayed down for a while.
    if (connTimer) return;
    connTimer = setTimeout(function () {
      connTimer = null;
      if (navigator.onLine === false) setConn("offline");
      else if (!open && document.body.dataset.conn !== "stopped") setConn("reconnecting");
    }, CONN_GRACE_MS);
  }
  function reconnectSoon() {
    if (!open && wrapper && document.body.dataset.conn !== "stopped") wrapper.reconnect();
  }

  document.addEventListener("htmx:wsOpen", function (evt) {
    evt.target.dataset.connected = "1";
    wrapper = evt.detail.socketWrapper;
    open = true;
    clearTimeout(connTimer);
    connTimer = null;
    setConn("live");
    resendFailed();
  });
  document.addEventListener("htmx:wsClose", function (evt) {
    var target = evt.target, code = evt.detail.event.code;
    wrapper = evt.detail.socketWrapper;
    open = false;
    delete target.dataset.connected;
    if (NO_RETRY.test(String(code))) {
      target.dataset.closed = String(code);
      if (ENDED[code]) document.body.dataset.ended = ENDED[code];
      setConn("stopped");
      return;
    }
    laterConn();
    // Offline, nothing can connect: the browser's "online" event reconnects instead.
    if (navigator.onLine === false) return;
    // The extension retries only 1006/1011/1012/1013; a clean close resumes too.
    if ([1006, 1011, 1012, 1013].indexOf(code) < 0) {
      setTimeout(function () { evt.detail.socketWrapper.reconnect(); }, 300);
    }
  });
  window.addEventListener("offline", laterConn);
  window.addEventListener("online", function () {
    if (open) setConn("live");
    else if (document.body.dataset.conn === "offline") setConn("reconnecting");
    reconnectSoon();
    resendFailed();
  });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") reconnectSoon();
  });

  // -- the thread page ------------------------------------------------------------------
  var scroller = null, viewer = "", pinned = true, wasPinned = true, unseen = 0, ownArrived = false;

  function atBottom() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight <= PIN_PX;
  }
  function toBottom() {
    scroller.scrollTop = scroller.scrollHeight;
    pinned = true;
    setUnseen(0);
  }
  function setUnseen(n) {
    unseen = n;
    var jump = $("#jump");
    if (!jump) return;
    jump.hidden = n === 0;
    $(".count", jump).textContent = n === 1 ? "1 new message" : n + " new messages";
  }

  // Live and catch-up can both bring an entry: keep the first, drop the copy. A pending
  // message of this page gives way to the confirmed one (stream order wins).
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var fragment = evt.detail.fragment, target = evt.detail.target;
    if (target && target.id && target.id.indexOf("spend-") === 0) addToTotal(fragment);
    if (!fragment || !target.matches("#entries, .transcript-items")) return;
    Array.from(fragment.children || []).forEach(function (child) {
      if (child.matches(".edit-of")) { applyEdit(child); child.remove(); return; }
      if (child.matches(".react-of")) { applyReaction(child); child.remove(); return; }
      if (child.matches(".here-of")) { applyHere(child); child.remove(); return; }
      var existing = child.id && document.getElementById(child.id);
      if (existing && existing.classList.contains("pending")) {
        existing.remove();
        ownArrived = true;
      } else if (existing) {
        child.remove();
        return;
      }
      if (target.id === "entries" && child.matches(".entry.chat")) {
        if (typing[child.dataset.author]) { delete typing[child.dataset.author]; showHere(); }
        if (child.dataset.author === viewer) ownArrived = true;
        else unseenInFrame += 1; // narration never counts as new
      }
    });
    if (!fragment.children || fragment.children.length === 0) evt.detail.shouldSwap = false;
  });
  var unseenInFrame = 0;

  // The house page's rows (houses/fragments.py row_fragment) for a row this page doesn't
  // show (not loaded yet, or a new thread), so htmx never reports a missing target: a read
  // elsewhere swaps a row in place ("true"): nothing to do, the frame is dropped; news moves
  // a row to the top ("delete", then the row first): the delete gets a stand-in to remove.
  var ROW_FRAME = /^\s*<li id="(thread-[\w-]+)"[^>]*\bhx-swap-oob="(true|delete)"/;
  document.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var row = ROW_FRAME.exec(evt.detail.message || ""), list = $("#threads");
    if (!row || !list || document.getElementById(row[1])) return;
    if (row[2] === "true") return evt.preventDefault();
    var standIn = document.createElement("li");
    standIn.id = row[1];
    standIn.hidden = true;
    list.append(standIn);
  });

  document.addEventListener("htmx:wsBeforeMessage", function () {
    if (!scroller) return;
    wasPinned = atBottom(); // measured before anything is inserted
    unseenInFrame = 0;
    ownArrived = false;
  });
  document.addEventListener("htmx:wsAfterMessage", function () {
    if (!scroller) return;
    settle();
    if (wasPinned || ownArrived) toBottom();
    else if (unseenInFrame) setUnseen(unseen + unseenInFrame);
  });

  function settle() {
    foldReplies();
    regroup();
    localTimes();
  }
  window.arbeSettle = settle; // history.js settles the windows it inserts

  // A reply's line folds into its answer: the footer (spend, transcript) moves under the
  // bot's next message, and the line goes. A failed reply keeps its one line.
  function foldReplies() {
    $$("#entries > .entry.reply").forEach(function (reply) {
      if ($(".reply-line.failed", reply)) return;
      for (var next = reply.nextElementSibling; next; next = next.nextElementSibling) {
        if (next.matches(".entry.chat") && next.dataset.author === reply.dataset.bot) {
          var foot = $(".reply-foot", reply);
          if (foot) $(".msg", next).appendChild(foot);
          reply.remove();
          return;
        }
      }
    });
  }

  var dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "short" });
  var timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: "short" });
  var longDayFormat = new Intl.DateTimeFormat(undefined, { weekday: "long", month: "long", day: "numeric", year: "numeric" });
  var fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" });

  // Same author, within five minutes, on the same local day: one group. Narration breaks it.
  // The first message of each local day carries the day, shown as a divider above it.
  function regroup() {
    var lastDay = null;
    $$("#entries > .entry.chat").forEach(function (entry) {
      var at = new Date(Number(entry.dataset.ts)), day = dayFormat.format(at);
      var prev = entry.previousElementSibling;
      var grouped = !!prev && prev.matches(".entry.chat") &&
        prev.dataset.author === entry.dataset.author &&
        Number(entry.dataset.ts) - Number(prev.dataset.ts) <= GROUP_MS &&
        dayFormat.format(new Date(Number(prev.dataset.ts))) === day;
      entry.classList.toggle("grouped", grouped);
      var firstOfDay = day !== lastDay;
      entry.classList.toggle("first-of-day", firstOfDay);
      if (firstOfDay) entry.dataset.day = dayLabel(at);
      else delete entry.dataset.day;
      lastDay = day;
    });
  }

  function dayLabel(at) {
    var today = new Date(), yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
    if (dayFormat.format(at) === dayFormat.format(today)) return "Today";
    if (dayFormat.format(at) === dayFormat.format(yesterday)) return "Yesterday";
    return longDayFormat.format(at);
  }

  function localTimes() {
    // Times with data-relative are when.js's (one rule for every page).
    $$("#entries time[datetime]:not([data-local]):not([data-relative])").forEach(function (time) {
      var when = new Date(time.getAttribute("datetime"));
      if (isNaN(when)) return;
      time.textContent = timeFormat.format(when); // the day is in the divider above
      time.title = fullFormat.format(when);
      time.dataset.local = "1";
    });
  }

  function addToTotal(fragment) {
    var total = $("#thread-total"), span = fragment && (fragment.firstElementChild || fragment);
    if (!total || !span || !span.dataset || !span.dataset.tokens) return;
    var tokens = Number(total.dataset.tokens) + Number(span.dataset.tokens);
    var cost = Number(total.dataset.cost) + Number(span.dataset.cost || 0);
    total.dataset.tokens = String(tokens);
    total.dataset.cost = String(cost);
    // The server's words (threads/templatetags/arbe_now.py `spend`): "1,410 tokens · $0.0123".
    total.textContent = tokens.toLocaleString("en-US") + (tokens === 1 ? " token" : " tokens") +
      (cost ? " · $" + cost.toFixed(4) : "");
    total.parentElement.hidden = !tokens;
  }

  // The viewer's own rules: their messages' menu, their mentions. A constructed sheet is
  // CSSOM, not an inline <style>, so the CSP's style-src 'self' allows it.
  function viewerRules() {
    if (!viewer || !document.adoptedStyleSheets) return;
    var v = CSS.escape(viewer), sheet = new CSSStyleSheet();
    sheet.replaceSync(
      '.entry.chat[data-author="' + v + '"] .actions { display: block; }\n' +
      '.entry.chat[data-author="' + v + '"] .actions .menu button.edit { display: block; }\n' +
      // An author may remove their own uploads (houses.access.access_purge); owners any.
      '.entry.chat[data-author="' + v + '"] .actions .menu button.purge { display: block; }\n' +
      '.reaction[data-who~="' + v + '"] { background: #e8effc; border-color: #9bb8ef; }\n' +
      '.mention[data-agent="' + v + '"] { background: #fdecc8; color: #7c4a03; }\n' +
      '.entry.chat:has(.mention[data-agent="' + v + '"]) { background: #fffaeb; box-shadow: inset 3px 0 #f0b429; }\n' +
      // Anyone in a private thread may leave it: their own row's button, worded so.
      '#people li[data-agent="' + v + '"] .member-remove { display: block; }\n' +
      '#people li[data-agent="' + v + '"] .as-remove { display: none; }\n' +
      '#people li[data-agent="' + v + '"] .as-leave { display: inline; }\n' +
      '#people li[data-agent="' + v + '"] .person-name::after { content: " (you)"; color: var(--muted); }'
    );
    document.adoptedStyleSheets = document.adoptedStyleSheets.concat([sheet]);
  }

  // -- compose: Enter sends, a client id per message, pending / failed / retry ----------
  var coarse = window.matchMedia("(pointer: coarse)");

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"]; } catch (e) { return ""; }
  }
  function clientId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "c" + Date.now().toString(36) + Math.random().toString(36).slice(2, 12);
  }

  function pendingEntry(form, id, text) {
    var entry = document.createElement("article");
    entry.id = "entry-" + id;
    entry.className = "entry chat pending";
    entry.dataset.author = viewer;
    entry.dataset.ts = String(Date.now());
    entry.dataset.text = text;
    var avatar = document.createElement("span");
    avatar.className = "avatar hue-" + form.dataset.hue;
    avatar.setAttribute("aria-hidden", "true");
    avatar.textContent = form.dataset.initials;
    var msg = document.createElement("div");
    msg.className = "msg";
    var header = document.createElement("header");
    var who = document.createElement("strong");
    who.className = "who";
    who.textContent = form.dataset.name;
    var when = document.createElement("time");
    when.className = "when";
    when.textContent = timeFormat.format(new Date());
    header.append(who, " ", when);
    var body = document.createElement("div");
    body.className = "body";
    body.textContent = text;
    var state = document.createElement("p");
    state.className = "send-state";
    state.setAttribute("role", "status");
    state.textContent = "Sending…";
    msg.append(header, body, state);
    entry.append(avatar, msg);
    return entry;
  }

  function send(entry) {
    var form = $("#compose");
    var id = entry.id.slice("entry-".length);
    var data = new URLSearchParams();
    data.set("text", entry.dataset.text);
    data.set("id", id);
    filesOf(entry).forEach(function (f) { data.append("attachment", f.id); });
    entry.classList.remove("failed");
    entry.classList.add("pending");
    $(".send-state", entry).textContent = "Sending…";
    var controller = new AbortController();
    var timer = setTimeout(function () { controller.abort(); }, SEND_TIMEOUT_MS);
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
      signal: controller.signal,
    }).then(function (response) {
      clearTimeout(timer);
      if (response.ok) {
        // Stored: the socket brings the real entry (now, or when it reconnects).
        if (entry.isConnected) $(".send-state", entry).textContent = "";
        entry.classList.add("sent");
      } else if (response.status >= 500 || response.status === 429) {
        failed(entry);
      } else {
        response.json().catch(function () { return {}; }).then(function (body) { refused(entry, body.error); });
      }
    }, function () {
      clearTimeout(timer);
      failed(entry);
    });
  }

  function failed(entry) {
    if (!entry.isConnected) return;
    entry.classList.add("failed");
    var state = $(".send-state", entry);
    // Offline, it is queued, as the header's banner says: it goes by itself on "online".
    var offline = navigator.onLine === false;
    entry.classList.toggle("queued", offline);
    state.textContent = offline ? "Will send when you're back online." : "Not sent.";
    var retry = document.createElement("button");
    retry.type = "button";
    retry.className = "secondary retry";
    retry.textContent = "Retry";
    var discard = document.createElement("button");
    discard.type = "button";
    discard.className = "secondary discard";
    discard.textContent = "Discard";
    if (offline) state.append(discard);
    else state.append(retry, discard);
  }

  // The server refused it (too long, not allowed…): the text goes back to the box.
  function refused(entry, message) {
    var box = $("#compose textarea");
    if (!box.value.trim()) box.value = entry.dataset.text;
    if (window.arbeAttach) window.arbeAttach.restore(filesOf(entry));
    entry.remove();
    showError(message || "The message could not be sent.");
    regroup();
  }

  function showError(message) {
    var error = $("#compose-error");
    if (!error) return;
    error.textContent = message;
    error.hidden = !message;
  }

  function resendFailed() {
    $$("#entries > .entry.chat.failed").forEach(send);
  }

  function submitCompose(form) {
    var box = $("textarea", form), text = box.value;
    var attach = window.arbeAttach;
    if (attach && attach.busy()) return showError("Wait for the files to finish uploading.");
    var files = attach ? attach.take() : [];
    if (!text.trim() && !files.length) return;
    var entry = pendingEntry(form, clientId(), text);
    entry.dataset.files = JSON.stringify(files);
    if (files.length) $(".body", entry).append(" 📎 " + files.map(function (f) { return f.name; }).join(", "));
    scroller.appendChild(entry);
    box.value = "";
    grow(box);
    showError("");
    regroup();
    toBottom();
    send(entry);
  }

  function filesOf(entry) {
    try { return JSON.parse(entry.dataset.files || "[]"); } catch (e) { return []; }
  }

  function grow(box) {
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight, 192) + "px";
  }

  // -- @-mention autocomplete -------------------------------------------------------------
  var people = [], list = null, options = [], active = -1, token = null;
  var MENTION_AT = /(^|[\s"'(\[{<\/])@([a-z0-9_-]{0,32})$/;

  function mentionToken(box) {
    if (box.selectionStart !== box.selectionEnd) return null;
    var before = box.value.slice(Math.max(0, box.selectionStart - 40), box.selectionStart);
    var m = MENTION_AT.exec(before);
    if (!m) return null;
    return { query: m[2], start: box.selectionStart - m[2].length - 1, end: box.selectionStart };
  }

  function matches(query) {
    var q = query.toLowerCase();
    var first = [], then = [];
    people.forEach(function (p) {
      if (p.handle.indexOf(q) === 0) first.push(p);
      else if (q && (p.handle.indexOf(q) > 0 || p.name.toLowerCase().indexOf(q) >= 0)) then.push(p);
    });
    return first.concat(then).slice(0, 8);
  }

  function closeList() {
    if (!list) return;
    list.hidden = true;
    list.replaceChildren();
    options = [];
    active = -1;
    token = null;
    var box = $("#compose textarea");
    box.setAttribute("aria-expanded", "false");
    box.removeAttribute("aria-activedescendant");
  }

  function showList(box) {
    token = mentionToken(box);
    options = token ? matches(token.query) : [];
    if (!options.length) return closeList();
    list.replaceChildren();
    options.forEach(function (p, i) {
      var li = document.createElement("li");
      li.id = "mention-option-" + i;
      li.setAttribute("role", "option");
      var handle = document.createElement("strong");
      handle.textContent = "@" + p.handle;
      var name = document.createElement("span");
      name.className = "name";
      name.textContent = p.name + (p.bot ? " · bot" : "");
      li.append(handle, name);
      li.addEventListener("mousedown", function (evt) {
        evt.preventDefault(); // keep the focus in the box
        complete(box, i);
      });
      list.appendChild(li);
    });
    list.hidden = false;
    box.setAttribute("aria-expanded", "true");
    select(box, 0);
  }

  function select(box, index) {
    active = (index + options.length) % options.length;
    $$("li", list).forEach(function (li, i) { li.setAttribute("aria-selected", i === active ? "true" : "false"); });
    box.setAttribute("aria-activedescendant", "mention-option-" + active);
    var li = list.children[active];
    if (li && li.scrollIntoView) li.scrollIntoView({ block: "nearest" });
  }

  function complete(box, index) {
    var person = options[index];
    if (!person || !token) return closeList();
    var insert = "@" + person.handle + " ";
    box.setRangeText(insert, token.start, token.end, "end");
    closeList();
    box.focus();
  }

  function onComposeKey(evt) {
    var box = evt.target;
    if (!box.matches || !box.matches("#compose textarea") || evt.isComposing) return;
    if (list && !list.hidden && options.length) {
      if (evt.key === "ArrowDown" || evt.key === "ArrowUp") {
        evt.preventDefault();
        select(box, active + (evt.key === "ArrowDown" ? 1 : -1));
        return;
      }
      if (evt.key === "Enter" || evt.key === "Tab") {
        evt.preventDefault();
        complete(box, active);
        return;
      }
      if (evt.key === "Escape") {
        evt.preventDefault();
        evt.stopPropagation();
        closeList();
        return;
      }
    }
    if (editLast(evt)) return;
    // Enter sends, Shift+Enter is a new line; on touch screens Enter is a new line.
    if (evt.key === "Enter" && !evt.shiftKey && !coarse.matches) {
      evt.preventDefault();
      submitCompose(box.form);
    }
  }

  // -- edit: the author's own messages, in place ---------------------------------------
  // An edit arrives as the chat's new body (templates/threads/_edited.html): it replaces the
  // old one when this page shows that chat from that author; otherwise it is dropped.
  function applyEdit(child) {
    var body = document.getElementById("body-" + child.dataset.entry);
    var entry = body && body.closest(".entry.chat"), fresh = child.firstElementChild;
    if (!entry || !fresh || entry.dataset.author !== child.dataset.author) return;
    body.replaceWith(fresh);
  }

  function entryUrl(entry) {
    var del = $("button.delete", entry);
    return del ? del.getAttribute("hx-delete") : "";
  }

  function startEdit(entry) {
    if (!entry || entry.classList.contains("editing") || entry.dataset.author !== viewer) return;
    var menu = $("details.actions", entry);
    if (menu) menu.open = false;
    $$("#entries .entry.editing").forEach(stopEdit);
    var form = document.createElement("form");
    form.className = "editor";
    var box = document.createElement("textarea");
    box.setAttribute("aria-label", "Edit your message");
    box.rows = 2;
    box.disabled = true;
    var bar = document.createElement("div");
    bar.className = "editor-bar";
    bar.innerHTML = '<span class="hint">Enter to save · Esc to cancel</span>' +
      '<button type="button" class="secondary cancel">Cancel</button> <button type="submit">Save</button>';
    form.append(box, bar);
    $(".body", entry).after(form);
    entry.classList.add("editing");
    fetch(entryUrl(entry), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); })
      .then(function (answer) {
        if (!answer.ok) { stopEdit(entry); showError(answer.body.error || "The message can't be edited."); return; }
        box.value = box.dataset.was = answer.body.text;
        box.disabled = false;
        grow(box);
        box.focus();
        box.setSelectionRange(box.value.length, box.value.length);
      }, function () { stopEdit(entry); showError("The message could not be loaded to edit."); });
    form.addEventListener("submit", function (evt) { evt.preventDefault(); saveEdit(entry, box); });
    $(".cancel", bar).addEventListener("click", function () { stopEdit(entry); });
    box.addEventListener("input", function () { grow(box); });
    box.addEventListener("keydown", function (evt) {
      if (evt.isComposing) return;
      if (evt.key === "Escape") { evt.preventDefault(); evt.stopPropagation(); stopEdit(entry); }
      else if (evt.key === "Enter" && !evt.shiftKey && !coarse.matches) { evt.preventDefault(); saveEdit(entry, box); }
    });
  }

  function stopEdit(entry) {
    var form = $("form.editor", entry);
    if (form) form.remove();
    entry.classList.remove("editing");
    var box = $("#compose textarea");
    if (box && !coarse.matches) box.focus({ preventScroll: true });
  }

  function saveEdit(entry, box) {
    var text = box.value;
    if (box.disabled) return;
    if (!text.trim()) { showError("A message can't be empty: delete it instead."); return; }
    if (text === box.dataset.was) { stopEdit(entry); return; }
    box.disabled = true;
    fetch(entryUrl(entry), {
      method: "PATCH",
      body: JSON.stringify({ text: text }),
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json", "Content-Type": "application/json" },
    }).then(function (response) {
      if (response.ok) { showError(""); stopEdit(entry); return; } // the socket brings the new text
      box.disabled = false;
      response.json().catch(function () { return {}; }).then(function (body) {
        showError(body.error || "The message could not be edited (" + response.status + ").");
      });
    }, function () {
      box.disabled = false;
      showError("The message could not be edited: the server could not be reached.");
    });
  }

  // Up in an empty compose box edits your last message, as in Slack.
  function editLast(evt) {
    var box = evt.target;
    if (evt.key !== "ArrowUp" || box.value || evt.shiftKey || evt.altKey || evt.metaKey || evt.ctrlKey) return false;
    var mine = $$("#entries > .entry.chat:not(.pending)").filter(function (e) { return e.dataset.author === viewer; });
    if (!mine.length) return false;
    evt.preventDefault();
    var last = mine[mine.length - 1];
    last.scrollIntoView({ block: "nearest" });
    startEdit(last);
    return true;
  }

  // -- reactions: chips under a message, a palette to add one ----------------------------
  // A reaction arrives as a delta (templates/threads/_reacted.html), folded here as the
  // server folds the log (threads/reactions.py): per emoji, who reacts, in order.
  function names(chip) { try { return JSON.parse(chip.dataset.names || "[]"); } catch (e) { return []; } }
  function applyReaction(child) {
    // A bot's reply that ends in a reaction (a "seen") leaves no line behind.
    $$("#entries > .entry.reply").forEach(function (reply) {
      if (reply.dataset.bot === child.dataset.agent && !$(".reply-line.failed", reply)) reply.remove();
    });
    var bar = document.getElementById("rx-" + child.dataset.entry);
    if (!bar) return;
    var emoji = child.dataset.emoji, agent = child.dataset.agent, on = child.dataset.on === "1";
    var chip = $$(".reaction", bar).filter(function (c) { return c.dataset.emoji === emoji; })[0];
    if (!chip) {
      if (!on) return;
      chip = document.createElement("button");
      chip.type = "button";
      chip.className = "reaction";
      chip.dataset.emoji = emoji;
      chip.dataset.who = "";
      chip.append(emoji);
      var n = document.createElement("span");
      n.className = "n";
      chip.append(n);
      bar.insertBefore(chip, $(".react-add", bar));
    }
    var who = chip.dataset.who ? chip.dataset.who.split(" ") : [], shown = names(chip), i = who.indexOf(agent);
    if (on && i < 0) { who.push(agent); shown.push(child.dataset.name); }
    else if (!on && i >= 0) { who.splice(i, 1); shown.splice(i, 1); }
    if (!who.length) { chip.remove(); return; }
    chip.dataset.who = who.join(" ");
    chip.dataset.names = JSON.stringify(shown);
    $(".n", chip).textContent = String(who.length);
    chip.title = shown.join(", ") + " reacted with " + emoji;
  }

  function sendReaction(entry, emoji, on) {
    fetch(entryUrl(entry) + "/reactions", {
      method: "POST",
      body: JSON.stringify({ emoji: emoji, on: on }),
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json", "Content-Type": "application/json" },
    }).then(function (response) {
      if (response.ok) { showError(""); return; } // the socket brings it to everyone
      response.json().catch(function () { return {}; }).then(function (body) {
        showError(body.error || "The reaction could not be saved (" + response.status + ").");
      });
    }, function () { showError("The reaction could not be saved: the server could not be reached."); });
  }

  function toggleReaction(chip) {
    var who = chip.dataset.who ? chip.dataset.who.split(" ") : [];
    sendReaction(chip.closest(".entry.chat"), chip.dataset.emoji, who.indexOf(viewer) < 0);
  }

  var paletteEl = null; // kept here: an open palette leaves with a message deleted under it
  function openPalette(add) {
    var palette = paletteEl, bar = add.closest(".reactions");
    if (!palette || !bar) return;
    if (!palette.hidden && palette.parentElement === bar) { closePalette(); return; }
    bar.appendChild(palette);
    palette.hidden = false;
    palette.scrollIntoView({ block: "nearest" });
    $("button.pick", palette).focus({ preventScroll: true });
  }
  function closePalette() {
    var palette = paletteEl;
    if (!palette || palette.hidden) return false;
    palette.hidden = true;
    $("input", palette).value = "";
    document.body.appendChild(palette);
    return true;
  }
  function pick(palette, emoji) {
    var entry = palette.closest(".entry.chat"), add = entry && $(".react-add", entry);
    closePalette();
    if (!entry || !emoji) return;
    var chip = $$(".reaction", entry).filter(function (c) { return c.dataset.emoji === emoji; })[0];
    var mine = chip && chip.dataset.who.split(" ").indexOf(viewer) >= 0;
    if (!mine) sendReaction(entry, emoji, true);
    if (add) add.focus({ preventScroll: true });
  }
  function setUpPalette() {
    var palette = paletteEl = $("#react-palette");
    if (!palette) return;
    palette.addEventListener("click", function (evt) {
      var button = evt.target.closest("button.pick");
      if (button) pick(palette, button.dataset.emoji);
    });
    $("form", palette).addEventListener("submit", function (evt) {
      evt.preventDefault();
      pick(palette, $("input", palette).value.trim());
    });
    palette.addEventListener("keydown", function (evt) {
      if (evt.key === "Escape") { evt.preventDefault(); evt.stopPropagation(); closePalette(); }
    });
    document.addEventListener("click", function (evt) {
      if (!palette.hidden && !palette.contains(evt.target) && !evt.target.closest(".react-add")) closePalette();
    });
  }

  // -- presence and typing (threads/presence.py): over the socket, never in the log -------
  var HERE_BEAT_MS = 15000, HERE_FORGET_MS = 40000, TYPING_EVERY_MS = 3000, TYPING_FORGET_MS = 6000;
  var here = {}, typing = {}, typedAt = 0;
  function applyHere(child) {
    var d = child.dataset, now = Date.now();
    if (d.state === "left") { delete here[d.agent]; delete typing[d.agent]; }
    else {
      here[d.agent] = { name: d.name, initials: d.initials, hue: d.hue, at: now };
      if (d.state === "typing" && d.agent !== viewer) typing[d.agent] = now;
    }
    showHere();
  }
  function showHere() {
    var now = Date.now(), box = $("#here"), line = $("#typing");
    Object.keys(here).forEach(function (a) { if (now - here[a].at > HERE_FORGET_MS) delete here[a]; });
    Object.keys(typing).forEach(function (a) { if (now - typing[a] > TYPING_FORGET_MS || !here[a]) delete typing[a]; });
    if (box) {
      var people = Object.keys(here).sort(function (a, b) { return here[a].name.localeCompare(here[b].name); });
      box.replaceChildren.apply(box, people.map(function (a) {
        var span = document.createElement("span");
        span.className = "avatar hue-" + here[a].hue;
        span.dataset.agent = a;
        span.title = here[a].name + (a === viewer ? " (you)" : "") + " is here";
        span.textContent = here[a].initials;
        return span;
      }));
    }
    if (line) {
      var names = Object.keys(typing).map(function (a) { return here[a].name; }).sort();
      line.textContent = names.length === 0 ? "" : names.length === 1 ? names[0] + " is typing…" :
        names.length === 2 ? names[0] + " and " + names[1] + " are typing…" : names.length + " people are typing…";
    }
  }
  function tell(message) {
    var socket = window.arbeSocket;
    if (socket && socket.readyState === 1) socket.send(JSON.stringify(message));
  }
  function typed(box) {
    var now = Date.now();
    if (!box.value.trim() || now - typedAt < TYPING_EVERY_MS) return;
    typedAt = now;
    tell({ typing: true });
  }

  // -- delete: a per-message menu and a confirmation dialog -----------------------------
  document.addEventListener("htmx:confirm", function (evt) {
    var entry = evt.detail.elt && evt.detail.elt.closest && evt.detail.elt.closest(".entry.chat");
    var dialog = $("#confirm-delete");
    if (!evt.detail.question || !entry || !dialog || !dialog.showModal) return;
    if (!evt.detail.elt.matches(".delete")) return; // other questions are confirm.js's (data-confirm)
    evt.preventDefault();
    var menu = $("details.actions", entry);
    if (menu) menu.open = false;
    var body = $(".body", entry);
    $(".quote", dialog).textContent = body ? body.textContent.trim().slice(0, 280) : "";
    // Its files go with it (the server deletes their bytes): say which, before it's too late.
    var names = $$(".files:not(.purged) .file-name", entry).map(function (n) { return n.textContent; });
    var fate = $(".files-fate", dialog);
    fate.hidden = !names.length;
    fate.textContent = !names.length ? "" : (names.length === 1 ? "Its file, " : "Its " + names.length + " files, ") +
      names.join(", ") + ", " + (names.length === 1 ? "is" : "are") + " deleted with it: nobody can open or download " +
      (names.length === 1 ? "it" : "them") + " again.";
    dialog.returnValue = "";
    dialog.addEventListener("close", function () {
      if (dialog.returnValue === "delete") evt.detail.issueRequest(true);
    }, { once: true });
    dialog.showModal();
  });
  document.addEventListener("click", function (evt) {
    $$("details.actions[open]").forEach(function (menu) {
      if (!menu.contains(evt.target)) menu.open = false;
    });
  });
  document.addEventListener("keydown", function (evt) {
    if (evt.key !== "Escape") return;
    $$("details.actions[open]").forEach(function (menu) {
      menu.open = false;
      $("summary", menu).focus();
    });
  });

  function setUp() {
    scroller = document.getElementById("entries");
    if (!scroller) return;
    viewer = document.body.dataset.viewer || "";
    viewerRules();
    setUpPalette();
    var form = $("#compose"), box = $("#compose textarea");
    list = $("#mention-list");
    var data = document.getElementById("mentionable");
    try { people = data ? JSON.parse(data.textContent) : []; } catch (e) { people = []; }

    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    settle();
    var linked = location.hash && document.getElementById(location.hash.slice(1));
    if (linked && scroller.contains(linked)) {
      linked.scrollIntoView({ block: "center" });
      linked.classList.add("linked");
      pinned = atBottom();
    } else {
      toBottom();
    }
    scroller.addEventListener("scroll", function () {
      pinned = atBottom();
      if (pinned && unseen) setUnseen(0);
    }, { passive: true });
    // Re-pin when the scroller or its content changes size while pinned (keyboard,
    // opened transcripts, fonts, the phone's Now bar).
    if (window.ResizeObserver) new ResizeObserver(function () { if (pinned) toBottom(); }).observe(scroller);
    scroller.addEventListener("toggle", function () { if (pinned) toBottom(); }, true);
    $("#jump").addEventListener("click", function () { toBottom(); scroller.focus({ preventScroll: true }); });

    form.addEventListener("submit", function (evt) { evt.preventDefault(); submitCompose(form); });
    if (!coarse.matches && !linked) box.focus({ preventScroll: true }); // ready to type, as in chat apps
    box.addEventListener("keydown", onComposeKey);
    box.addEventListener("input", function () { grow(box); showList(box); typed(box); });
    setInterval(function () { tell({ here: true }); }, HERE_BEAT_MS);
    setInterval(showHere, 2000);
    box.addEventListener("click", function () { showList(box); });
    box.addEventListener("blur", function () { setTimeout(closeList, 100); });
    scroller.addEventListener("click", function (evt) {
      var edit = evt.target.closest("button.edit");
      if (edit) { startEdit(edit.closest(".entry.chat")); return; }
      var chip = evt.target.closest("button.reaction");
      if (chip) { toggleReaction(chip); return; }
      var add = evt.target.closest("button.react-add");
      if (add) { openPalette(add); return; }
      var button = evt.target.closest("button.retry, button.discard");
      if (!button) return;
      var entry = button.closest(".entry");
      if (button.matches(".retry")) send(entry);
      else { entry.remove(); regroup(); }
    });
    form.addEventListener("click", function (evt) {
      var button = evt.target.closest("[data-mention]");
      if (!button) return;
      box.value = (box.value && !/\s$/.test(box.value) ? box.value + " " : box.value) + button.dataset.mention + " ";
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    });

    // The Now panel is a card beside the conversation on wide screens, a bar on phones.
    var side = document.getElementById("side"), wide = window.matchMedia("(min-width: 721px)");
    if (side) {
      var sync = function () { side.open = wide.matches; };
      sync();
      wide.addEventListener("change", sync);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

// A message's author name on the thread page opens a small menu: "Message <name>" starts
// or reopens the direct conversation with them (the house's form, POST with the page's
// CSRF token; threads/privacy_pages.py). Not for one's own name. The people panel's forms,
// when the panel arrived live (the same for every viewer), get the page's token as they go.
(function () {
  "use strict";
  var menu = null, entries = null;

  function hide() { if (menu) menu.hidden = true; }

  function show(who, author) {
    var name = who.textContent.trim();
    menu.querySelector(".who-name").textContent = name;
    menu.dataset.agent = author;
    var box = who.getBoundingClientRect();
    menu.style.left = Math.max(8, Math.min(box.left, window.innerWidth - 240)) + "px";
    menu.style.top = box.bottom + 4 + "px";
    menu.hidden = false;
    menu.querySelector("button").focus();
  }

  function pageToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"]; } catch (e) { return ""; }
  }

  function message() {
    var form = document.createElement("form"), token = pageToken();
    form.method = "post";
    form.action = entries.dataset.directUrl;
    [["csrfmiddlewaretoken", token], ["agent", menu.dataset.agent]].forEach(function (pair) {
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = pair[0];
      field.value = pair[1];
      form.append(field);
    });
    document.body.append(form);
    form.submit();
  }

  document.addEventListener("submit", function (evt) {
    var field = evt.target.closest && evt.target.closest("#people-box form") &&
      evt.target.querySelector("input[name=csrfmiddlewaretoken]");
    if (field && !field.value) field.value = pageToken();
  }, true);

  function setUp() {
    menu = document.getElementById("who-menu");
    entries = document.getElementById("entries");
    if (!menu || !entries || !entries.dataset.directUrl) return;
    menu.querySelector("button").addEventListener("click", message);
    document.addEventListener("click", function (evt) {
      // The header's "who": on a phone the panel is in the folded side panel; unfold it.
      var whoLink = evt.target.closest && evt.target.closest("#readers-line a[href='#people']");
      var side = document.getElementById("side");
      if (whoLink && side && !side.open) side.open = true;
      var who = evt.target.closest && evt.target.closest("#entries .entry.chat .who");
      if (!who) { if (!menu.contains(evt.target)) hide(); return; }
      var author = who.closest(".entry.chat").dataset.author;
      if (!author || author === document.body.dataset.viewer) return;
      evt.preventDefault();
      show(who, author);
    });
    document.addEventListener("keydown", function (evt) { if (evt.key === "Escape") hide(); });
    entries.addEventListener("scroll", hide, { passive: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

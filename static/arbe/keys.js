// Keyboard on every page: "/" focuses search; Ctrl/Cmd+K jumps to a thread by name across
// your houses, or messages a person (threads/jump.py answers, filtered by membership: a
// person's row posts the house's direct-conversation form); "?" lists the shortcuts
// (templates/base.html); Esc closes what is open.
(function () {
  "use strict";
  function typingIn(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  var dialog = null, input = null, list = null, items = [], active = 0, timer = null, asked = 0;

  function render(threads) {
    items = threads;
    active = 0;
    list.replaceChildren.apply(list, threads.map(function (t, i) {
      var li = document.createElement("li"), a = document.createElement("a");
      a.href = t.agent ? "#" : t.url;
      a.id = "jump-option-" + i;
      if (t.agent) a.className = "person";
      a.setAttribute("role", "option");
      var title = document.createElement("span");
      title.className = "title";
      title.textContent = t.title;
      var house = document.createElement("span");
      house.className = "house";
      house.textContent = t.house;
      a.append(title, house);
      li.append(a);
      return li;
    }));
    if (!threads.length) {
      var empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = input.value.trim() ? "No thread or person matches." : "No threads yet.";
      list.append(empty);
    }
    select(0);
  }
  function select(i) {
    if (!items.length) return;
    active = (i + items.length) % items.length;
    Array.prototype.forEach.call(list.querySelectorAll("a"), function (a, j) {
      a.setAttribute("aria-selected", j === active ? "true" : "false");
    });
    input.setAttribute("aria-activedescendant", "jump-option-" + active);
  }
  function ask() {
    var mine = ++asked;
    fetch(dialog.dataset.url + "?q=" + encodeURIComponent(input.value), {
      credentials: "same-origin", headers: { Accept: "application/json" },
    }).then(function (r) { return r.json(); }).then(function (body) {
      if (mine === asked) render((body.threads || []).concat(body.people || []));
    }, function () {});
  }
  function open() {
    if (!dialog) return;
    input.value = "";
    dialog.showModal();
    input.focus();
    ask();
  }

  document.addEventListener("keydown", function (evt) {
    if ((evt.ctrlKey || evt.metaKey) && !evt.altKey && (evt.key === "k" || evt.key === "K")) {
      if (!dialog) return;
      evt.preventDefault();
      if (dialog.open) dialog.close(); else open();
      return;
    }
    if (evt.key === "?" && !evt.ctrlKey && !evt.metaKey && !evt.altKey && !typingIn(evt.target)) {
      var help = document.getElementById("shortcuts");
      if (help && help.showModal && !document.querySelector("dialog[open]")) {
        evt.preventDefault();
        help.showModal();
      }
      return;
    }
    if (evt.key === "/" && !evt.ctrlKey && !evt.metaKey && !evt.altKey && !typingIn(evt.target)) {
      var search = document.querySelector(".topbar input[type=search]");
      if (search) { evt.preventDefault(); search.focus(); search.select(); }
    }
  });

  // A thread opens by its link; a person's direct conversation by the house's form (POST,
  // with the page's CSRF token), which answers with the conversation.
  function go(item) {
    if (!item.agent) { location.href = item.url; return; }
    var form = document.createElement("form"), token = "";
    try { token = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"]; } catch (e) {}
    form.method = "post";
    form.action = item.url;
    [["csrfmiddlewaretoken", token], ["agent", item.agent]].forEach(function (pair) {
      var field = document.createElement("input");
      field.type = "hidden";
      field.name = pair[0];
      field.value = pair[1];
      form.append(field);
    });
    document.body.append(form);
    form.submit();
  }

  function setUp() {
    dialog = document.getElementById("jump-palette");
    if (!dialog) return;
    input = dialog.querySelector("input");
    list = dialog.querySelector("ul");
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(ask, 120); });
    input.addEventListener("keydown", function (evt) {
      if (evt.key === "ArrowDown" || evt.key === "ArrowUp") {
        evt.preventDefault();
        select(active + (evt.key === "ArrowDown" ? 1 : -1));
      } else if (evt.key === "Escape") {
        evt.preventDefault();
        dialog.close();
      } else if (evt.key === "Enter" && items[active]) {
        evt.preventDefault();
        go(items[active]);
      }
    });
    list.addEventListener("click", function (evt) {
      var a = evt.target.closest("a[id^='jump-option-']");
      var item = a && items[Number(a.id.slice("jump-option-".length))];
      if (item && item.agent) { evt.preventDefault(); go(item); }
    });
    dialog.addEventListener("click", function (evt) { if (evt.target === dialog) dialog.close(); });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

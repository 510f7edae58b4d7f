// Attachments on the compose box: a button, paste and drag-and-drop upload each file at
// once (POST …/attachments, one file per request); the chips above the box show a
// thumbnail or the name and size, and live.js takes their ids when the message is sent.
(function () {
  "use strict";
  var form, list, input, box;
  var chips = []; // {id?, name, node, busy}

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"]; } catch (e) { return ""; }
  }

  function sync() {
    list.hidden = !chips.length;
    box.required = !chips.length; // files alone are a message
  }

  function error(text) {
    var node = document.getElementById("compose-error");
    if (!node) return;
    node.textContent = text;
    node.hidden = !text;
  }

  function chip(name) {
    var li = document.createElement("li");
    li.className = "attach-chip busy";
    var label = document.createElement("span");
    label.className = "attach-name";
    label.textContent = name;
    var state = document.createElement("span");
    state.className = "attach-state";
    state.textContent = "Uploading…";
    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "attach-remove";
    remove.setAttribute("aria-label", "Remove " + name);
    remove.textContent = "×";
    li.append(label, state, remove);
    return li;
  }

  function ready(item, a) {
    item.id = a.id;
    item.name = a.name;
    item.busy = false;
    var node = item.node;
    node.classList.remove("busy");
    node.dataset.attachment = a.id;
    if (a.thumb) {
      var img = document.createElement("img");
      img.src = a.thumb;
      img.alt = "";
      node.classList.add("image");
      node.prepend(img);
    }
    node.querySelector(".attach-state").textContent = a.sizeText;
  }

  function upload(file) {
    var ext = (file.type || "").split("/")[1] || "bin";
    var item = { name: file.name || "Pasted image." + ext.replace(/\W.*$/, ""), busy: true };
    item.node = chip(item.name);
    chips.push(item);
    list.append(item.node);
    sync();
    error("");
    var data = new FormData();
    data.append("file", file, item.name);
    fetch(form.dataset.attachUrl, {
      method: "POST", body: data, credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) throw new Error(body.error || "The file could not be uploaded (" + response.status + ").");
        if (chips.indexOf(item) >= 0) ready(item, body.attachment);
      });
    }).catch(function (e) {
      drop(item);
      error(item.name + ": " + (e && e.message && e.message !== "Failed to fetch" ? e.message : "the upload failed."));
    });
  }

  function drop(item) {
    var i = chips.indexOf(item);
    if (i >= 0) chips.splice(i, 1);
    item.node.remove();
    sync();
  }

  function addFiles(files) {
    Array.prototype.forEach.call(files || [], upload);
  }

  window.arbeAttach = {
    busy: function () { return chips.some(function (c) { return c.busy; }); },
    take: function () {
      var taken = chips.map(function (c) { return { id: c.id, name: c.name }; });
      chips.slice().forEach(drop);
      return taken;
    },
    // A refused send: its files go back above the box (names only; the uploads stand).
    restore: function (files) {
      (files || []).forEach(function (f) {
        var item = { id: f.id, name: f.name, busy: false, node: chip(f.name) };
        item.node.classList.remove("busy");
        item.node.dataset.attachment = f.id;
        item.node.querySelector(".attach-state").textContent = "";
        chips.push(item);
        list.append(item.node);
      });
      sync();
    },
  };

  function setUp() {
    form = document.getElementById("compose");
    if (!form || !form.dataset.attachUrl) return;
    list = document.getElementById("attach-list");
    input = document.getElementById("attach-input");
    box = form.querySelector("textarea");
    form.querySelector("button.attach").addEventListener("click", function () { input.click(); });
    input.addEventListener("change", function () { addFiles(input.files); input.value = ""; });
    list.addEventListener("click", function (evt) {
      var button = evt.target.closest(".attach-remove");
      if (!button) return;
      var node = button.closest(".attach-chip");
      chips.filter(function (c) { return c.node === node; }).forEach(drop);
      box.focus();
    });
    box.addEventListener("paste", function (evt) {
      var files = evt.clipboardData && evt.clipboardData.files;
      if (!files || !files.length) return;
      evt.preventDefault();
      addFiles(files);
    });
    var depth = 0;
    form.addEventListener("dragenter", function (evt) {
      if (!evt.dataTransfer || evt.dataTransfer.types.indexOf("Files") < 0) return;
      depth += 1;
      form.classList.add("dragging");
    });
    form.addEventListener("dragleave", function () {
      depth = Math.max(0, depth - 1);
      if (!depth) form.classList.remove("dragging");
    });
    form.addEventListener("dragover", function (evt) {
      if (evt.dataTransfer && evt.dataTransfer.types.indexOf("Files") >= 0) evt.preventDefault();
    });
    form.addEventListener("drop", function (evt) {
      depth = 0;
      form.classList.remove("dragging");
      if (!evt.dataTransfer || !evt.dataTransfer.files.length) return;
      evt.preventDefault();
      addFiles(evt.dataTransfer.files);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

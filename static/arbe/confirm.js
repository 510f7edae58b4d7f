// Forms that change something for good ask first, in a <dialog> (templates/_confirm.html):
// <form data-confirm="Remove mia?" data-confirm-detail="What happens." data-confirm-button="Remove">,
// or an htmx button with the same attributes. "{choice}" in the question is the label of the
// form's chosen <option> (hand over to whom).
// The CSP forbids inline handlers (onsubmit="return confirm(…)"), so this is the one way.
(function () {
  "use strict";
  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    var dialog = document.getElementById("confirm-action");
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (!dialog || !dialog.showModal) return; // no <dialog>: the server's own checks still hold
    evt.preventDefault();
    // submit() fires no submit event, so the dialog doesn't open again.
    ask(dialog, form, function () { form.submit(); });
  });

  // The same question for an htmx action (a button with hx-delete and data-confirm…): htmx
  // asks through this event before every request, so its request waits for the answer.
  document.addEventListener("htmx:confirm", function (evt) {
    var elt = evt.detail.elt;
    var dialog = document.getElementById("confirm-action");
    if (!elt || !elt.dataset || !elt.dataset.confirm || !dialog || !dialog.showModal) return;
    evt.preventDefault();
    var menu = elt.closest("details[open]");
    if (menu) menu.open = false;
    ask(dialog, elt, function () { evt.detail.issueRequest(true); });
  });

  function ask(dialog, source, then) {
    var select = source.querySelector && source.querySelector("select"), choice = "";
    if (select && select.selectedOptions.length) {
      var option = select.selectedOptions[0];
      choice = option.dataset.name || option.textContent.trim();
    }
    function fill(text) { return (text || "").split("{choice}").join(choice); }
    dialog.querySelector(".confirm-title").textContent = fill(source.dataset.confirm);
    dialog.querySelector(".confirm-detail").textContent = fill(source.dataset.confirmDetail);
    dialog.querySelector("button[value=confirm]").textContent = source.dataset.confirmButton || "Confirm";
    dialog.returnValue = "";
    dialog.addEventListener("close", function () {
      if (dialog.returnValue === "confirm") then();
    }, { once: true });
    dialog.showModal();
  }
})();

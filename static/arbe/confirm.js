// Forms that change something for good ask first, in a <dialog> (templates/_confirm.html):
// <form data-confirm="Remove mia?" data-confirm-detail="What happens." data-confirm-button="Remove">.
// The CSP forbids inline handlers (onsubmit="return confirm(…)"), so this is the one way.
(function () {
  "use strict";
  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    var dialog = document.getElementById("confirm-action");
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (!dialog || !dialog.showModal) return; // no <dialog>: the server's own checks still hold
    evt.preventDefault();
    dialog.querySelector(".confirm-title").textContent = form.dataset.confirm;
    dialog.querySelector(".confirm-detail").textContent = form.dataset.confirmDetail || "";
    dialog.querySelector("button[value=confirm]").textContent = form.dataset.confirmButton || "Confirm";
    dialog.returnValue = "";
    dialog.addEventListener("close", function () {
      // submit() fires no submit event, so the dialog doesn't open again.
      if (dialog.returnValue === "confirm") form.submit();
    }, { once: true });
    dialog.showModal();
  });
})();

// "Copy" buttons: data-copy names the input whose value goes to the clipboard.
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) return;
  var input = document.querySelector(button.getAttribute("data-copy"));
  if (!input) return;
  input.select();
  var done = function () { button.textContent = "Copied"; };
  if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () {});
  else if (document.execCommand("copy")) done();
});

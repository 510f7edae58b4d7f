// A request htmx made that the server refused (403, 404, 413, 5xx…, or no answer at all):
// nothing is swapped into the page, and the server's reason is said where the page says
// errors: the compose box's error line on a thread page, a flash line on the others.
// The API answers {"error": "…"}; an HTML error page is never shown in place of this one.
(function () {
  "use strict";
  function reason(xhr) {
    try {
      var body = JSON.parse(xhr.responseText);
      if (body && typeof body.error === "string" && body.error) return body.error;
    } catch (e) { /* not JSON: fall back on the status */ }
    if (!xhr.status) return "The server could not be reached. Try again in a moment.";
    if (xhr.status === 404) return "That is no longer there.";
    if (xhr.status === 403) return "You may not do that here.";
    return "That didn't work (" + xhr.status + "). Try again in a moment.";
  }

  function say(message) {
    var line = document.getElementById("compose-error");
    if (!line) {
      line = document.getElementById("refused");
      if (!line) {
        line = document.createElement("p");
        line.id = "refused";
        line.className = "flash error";
        line.setAttribute("role", "alert");
        var main = document.querySelector("main");
        if (!main) return;
        main.prepend(line);
      }
    }
    line.textContent = message;
    line.hidden = false;
  }

  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (evt.detail.xhr.status >= 400) evt.detail.shouldSwap = false;
  });
  document.addEventListener("htmx:responseError", function (evt) { say(reason(evt.detail.xhr)); });
  document.addEventListener("htmx:sendError", function (evt) { say(reason(evt.detail.xhr)); });
  window.arbeRefused = say;
})();

// The share box of an invite link (lobby/templates/lobby/_invite_share.html): "Copy link"
// puts the link on the clipboard, or selects it where the browser will not (then the
// player copies it by hand). The link itself is in the page, so it works without this.
(function () {
  "use strict";

  function copied(button, ok) {
    const status = button.parentElement.querySelector(".invite-copy-status");
    if (status) status.textContent = ok ? button.dataset.copied : button.dataset.failed;
  }

  document.querySelectorAll("[data-invite-copy]").forEach(function (button) {
    if (button.dataset.bound) return; // the script may be included more than once
    button.dataset.bound = "1";
    button.addEventListener("click", function () {
      const input = button.parentElement.querySelector("input");
      if (!input) return;
      input.select();
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(
          function () { copied(button, true); },
          function () { copied(button, false); }
        );
      } else {
        copied(button, false);
      }
    });
  });
})();

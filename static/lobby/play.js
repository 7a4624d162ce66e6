// The Play now page (lobby/templates/lobby/play.html), where the front page's Play now lands
// after logging in or signing up: it presses Play now at once, so a new player goes straight
// to a table. Only when the page was reached from this site: a link from elsewhere never
// seats anyone by itself (the button is there for that, and without JavaScript).
(function () {
  "use strict";

  const form = document.querySelector("form[data-autoplay]");
  if (!form || !document.referrer) return;
  let fromHere = false;
  try {
    fromHere = new URL(document.referrer).origin === window.location.origin;
  } catch (error) {
    fromHere = false;
  }
  if (fromHere) form.requestSubmit();
})();

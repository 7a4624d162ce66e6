// The Play now page (lobby/templates/lobby/play.html).
//
// Before pressing: where the front page's Play now lands after logging in or signing up, it
// presses Play now at once, so a new player goes straight to a table. Only when the page was
// reached from this site: a link from elsewhere never seats anyone by itself (the button is
// there for that, and without JavaScript).
//
// While waiting for players of the same level: counts the seconds down and asks the server
// (POST play/wait/, JSON) about once a second, and just after the deadline, where the wait
// stands; it goes to the table once seated, or to the lobby when the wait is over without a
// table (cancelled elsewhere, or refused: the lobby shows why). The server decides; this page
// only asks.
(function () {
  "use strict";

  const waiting = document.querySelector("[data-play-wait]");
  if (waiting) {
    wait(waiting);
    return;
  }

  const form = document.querySelector("form[data-autoplay]");
  if (!form || !document.referrer) return;
  let fromHere = false;
  try {
    fromHere = new URL(document.referrer).origin === window.location.origin;
  } catch (error) {
    fromHere = false;
  }
  if (fromHere) form.requestSubmit();

  function wait(status) {
    const strings = JSON.parse(document.getElementById("play-strings").textContent);
    const token = document.querySelector("form[data-play-cancel] [name=csrfmiddlewaretoken]");
    const deadline = Date.now() + Number(status.dataset.seconds) * 1000;
    let done = false;

    function show() {
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      status.textContent =
        left > 0 ? strings.finding.replace("%(seconds)s", String(left)) : strings.seating;
    }

    async function ask() {
      if (done) return;
      let delay = 1000;
      try {
        const response = await fetch(status.dataset.url, {
          method: "POST",
          headers: { Accept: "application/json", "X-CSRFToken": token ? token.value : "" },
          credentials: "same-origin",
        });
        const body = await response.json();
        if (response.status === 429) {
          delay = Math.max(1, Number(body.retry_after) || 1) * 1000;
        } else if (body.state === "seated" || body.state === "idle") {
          done = true;
          window.location.assign(body.url);
          return;
        }
      } catch (error) {
        delay = 2000; // the server is out of reach for a moment: ask again
      }
      // Ask again in a second, or just after the deadline if that comes first.
      const untilDeadline = deadline - Date.now() + 150;
      setTimeout(ask, untilDeadline > 0 ? Math.min(delay, untilDeadline) : delay);
    }

    show();
    setInterval(show, 250);
    setTimeout(ask, Math.min(1000, Math.max(0, deadline - Date.now() + 150)));
  }
})();

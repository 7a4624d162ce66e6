// The lobby's "Open a room" form: its seat choices follow the chosen rule configuration (each
// option of the rules select carries data-max-seats, its deck's seats: 4 classic, 5 with an
// extra suit, 6 with two), and its bot choices the seats (at most seats - 1); the bot level is
// asked only when bots are chosen. A convenience only: the server refuses a room with more
// seats than its rules allow, with or without this.
(function () {
  "use strict";

  const form = document.querySelector("form[data-room-create]");
  if (!form) return;
  const rules = form.querySelector("select[name=rules]");
  const seats = form.querySelector("select[name=seats]");
  const bots = form.querySelector("select[name=bots]");
  const level = form.querySelector("[data-bot-level]");
  if (!rules || !seats) return;

  // Disable the options above `most`, and move a choice above it down to it.
  function limit(select, most) {
    for (const option of select.options) option.disabled = Number(option.value) > most;
    if (Number(select.value) > most) select.value = String(most);
  }

  function follow() {
    const chosen = rules.selectedOptions[0];
    const most = chosen ? Number(chosen.dataset.maxSeats) : NaN;
    limit(seats, Number.isFinite(most) && most >= 2 ? most : Infinity);
    if (bots) limit(bots, Number(seats.value) - 1);
    if (bots && level) level.hidden = Number(bots.value) === 0;
  }

  rules.addEventListener("change", follow);
  seats.addEventListener("change", follow);
  if (bots) bots.addEventListener("change", follow);
  follow();
})();

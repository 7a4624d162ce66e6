// The statistics of a rule configuration's change page, while they are computed: the special
// hands' (one simulation per deck) and the row bonuses' (per configuration) each ask their
// progress URL every 2 s, move their progress bar, and put in the table the server sends once
// a sample (then the full run) is there. Each stops when nothing is running for it.
(function () {
  "use strict";
  var DELAY_MS = 2000;
  var BOXES = [".special-stats[data-progress-url]", ".row-bonus-stats[data-progress-url]"];

  function show(box, body) {
    var bar = box.querySelector(":scope > .stats-progress progress");
    var phase = box.querySelector(':scope > .stats-progress [data-role="phase"]');
    var count = box.querySelector(':scope > .stats-progress [data-role="count"]');
    if (bar) { bar.value = body.percent; bar.textContent = body.percent + " %"; }
    if (phase && phase.dataset[body.phase]) { phase.textContent = phase.dataset[body.phase]; }
    if (count) { count.textContent = body.done + " / " + body.total; }
  }

  function poll(selector) {
    var box = document.querySelector(selector);
    if (!box) { return; }
    var shown = box.dataset.phase || "";
    fetch(box.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status === 429) { return null; }
        return response.json();
      })
      .then(function (body) {
        if (body === null) { window.setTimeout(function () { poll(selector); }, DELAY_MS * 3); return; }
        if (body.html && body.phase !== shown) {
          var holder = document.createElement("div");
          holder.innerHTML = body.html;
          var fresh = holder.firstElementChild;
          if (fresh) { fresh.dataset.phase = body.phase; box.replaceWith(fresh); box = fresh; }
        }
        show(box, body);
        if (body.phase !== "ready" && body.phase !== "failed" && body.phase !== "invalid") {
          window.setTimeout(function () { poll(selector); }, DELAY_MS);
        }
      })
      .catch(function () { window.setTimeout(function () { poll(selector); }, DELAY_MS * 3); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    BOXES.forEach(function (selector) {
      if (document.querySelector(selector)) {
        window.setTimeout(function () { poll(selector); }, DELAY_MS);
      }
    });
  });
})();

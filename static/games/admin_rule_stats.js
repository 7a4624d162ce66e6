// The special-hand statistics of a rule configuration's change page, while they are computed:
// asks the page's progress URL every 2 s, moves the progress bar, and puts in the table the
// server sends once a sample (then the full simulation) is there. Stops when none is running.
(function () {
  "use strict";
  var DELAY_MS = 2000;

  function container() {
    return document.querySelector(".special-stats[data-progress-url]");
  }

  function show(box, body) {
    var bar = box.querySelector(".special-stats-progress progress");
    var phase = box.querySelector('.special-stats-progress [data-role="phase"]');
    var count = box.querySelector('.special-stats-progress [data-role="count"]');
    if (bar) { bar.value = body.percent; bar.textContent = body.percent + " %"; }
    if (phase && phase.dataset[body.phase]) { phase.textContent = phase.dataset[body.phase]; }
    if (count) { count.textContent = body.done + " / " + body.total; }
  }

  function poll() {
    var box = container();
    if (!box) { return; }
    var shown = box.dataset.phase || "";
    fetch(box.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status === 429) { return null; }
        return response.json();
      })
      .then(function (body) {
        if (body === null) { window.setTimeout(poll, DELAY_MS * 3); return; }
        if (body.html && body.phase !== shown) {
          var holder = document.createElement("div");
          holder.innerHTML = body.html;
          var fresh = holder.firstElementChild;
          if (fresh) { fresh.dataset.phase = body.phase; box.replaceWith(fresh); box = fresh; }
        }
        show(box, body);
        if (body.phase !== "ready" && body.phase !== "failed" && body.phase !== "invalid") {
          window.setTimeout(poll, DELAY_MS);
        }
      })
      .catch(function () { window.setTimeout(poll, DELAY_MS * 3); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (container()) { window.setTimeout(poll, DELAY_MS); }
  });
})();

// Countdowns and their bars (red in the last 5 s), and the deal's card backs, which move on
// their own (main.js ticks every 250 ms).
import { PLAY_PHASES, mySeat, canArrange, choosing, dealtTo } from "../state.js";
import { C, _, fmt, $ } from "./common.js";

// A bar that empties as time runs out and turns red in the last 5 s.
function timerBar(bar, left, total) {
  bar.hidden = left === null;
  if (left === null) return;
  const fraction = Math.max(0, Math.min(1, left / Math.max(total, 1)));
  bar.firstElementChild.style.width = (fraction * 100).toFixed(1) + "%";
  bar.classList.toggle("urgent", left <= 5);
  bar.setAttribute("aria-valuenow", String(Math.max(0, Math.ceil(left))));
}

export function secondsLeft(deadline, now) {
  if (!deadline) return null;
  return Math.max(0, Math.ceil(deadline - now));
}

// ctx: {state, root, nowSec(), dealElapsed()}
export function renderTimers(ctx) {
  const state = ctx.state;
  const table = state.table;
  const you = state.you;
  const now = ctx.nowSec();
  const seat = mySeat(state);
  const ready = $("ready-countdown");
  const readyLeft = seat && !seat.ready ? secondsLeft(seat.ready_deadline, now) : null;
  ready.textContent = readyLeft === null ? "" : fmt(_("%(s)s s"), { s: readyLeft });
  ready.classList.toggle("urgent", readyLeft !== null && readyLeft <= 5);
  const arrange = $("arrange-countdown");
  const arrangeDeadline =
    you.deadline && PLAY_PHASES.includes(table.phase) && you.special_choice === false
      ? you.deadline
      : table.arrange_deadline;
  const arrangeLeft = canArrange(state) ? secondsLeft(arrangeDeadline, now) : null;
  arrange.textContent = arrangeLeft === null ? "" : fmt(_("%(s)s s left to arrange"), { s: arrangeLeft });
  arrange.classList.toggle("urgent", arrangeLeft !== null && arrangeLeft <= 5);
  timerBar($("arrange-timer"), arrangeLeft === null ? null : arrangeDeadline - now, (table.config && table.config.arrange_seconds) || 30);
  timerBar($("ready-timer"), readyLeft === null ? null : seat.ready_deadline - now, (table.config && table.config.ready_seconds) || 15);
  const special = $("special-countdown");
  special.textContent = choosing(state)
    ? fmt(_("%(s)s s — no answer counts as Yes"), { s: secondsLeft(table.deadline, now) })
    : "";
  if (table.phase === "dealing") {
    const elapsed = ctx.dealElapsed();
    ctx.root.querySelectorAll(".backs").forEach((box) => {
      const want = dealtTo(state, Number(box.dataset.position), elapsed);
      while (box.children.length < want) box.append(C.cardBack({ small: true }));
    });
  }
}

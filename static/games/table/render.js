// Drawing the page from its state: the phase chip and the round, the one-screen layout while
// the player's own round is dealt and arranged, then every view; and the tick that moves the
// countdowns (and may press Ready for "keep playing") between renders.

import * as S from "./state.js";
import { _, fmt } from "./views/common.js";
import { renderSeats } from "./views/seats.js";
import { renderCenter } from "./views/compare.js";
import { renderArrange } from "./views/arrange.js";
import { renderSettlement } from "./views/settlement.js";
import { renderSpecial } from "./views/dialogs.js";
import { renderTimers } from "./views/timers.js";
import { renderChat } from "./views/chat.js";

const PHASE_NAMES = {
  waiting: _("Waiting"),
  dealing: _("Dealing"),
  special_choice: _("Special hands"),
  arranging: _("Arranging"),
  comparing: _("Comparing"),
  settled: _("Settled"),
};

// page: the page's context; parts: {schedule, controls, wakeLock}.
export function createRender(page, { schedule, controls, wakeLock }) {
  const root = page.root;

  function render() {
    const state = page.state;
    const table = state.table;
    root.dataset.phase = table.phase;
    // The screen stays awake from my deal to the end of the comparison (not while watching,
    // nor between rounds, nor once the table has sent me away).
    wakeLock.set(S.inRound(state) && !state.closed);
    // While the player's own round is dealt and arranged, everything fits one screen: the
    // felt shrinks to a strip of the opponents, the hand and rows take the rest.
    const playing = S.inRound(state) && ["dealing", "special_choice", "arranging"].includes(table.phase);
    root.classList.toggle("compact", playing && Boolean(state.you.hand));
    document.body.classList.toggle("table-compact", playing && Boolean(state.you.hand));
    // From the comparison to the next deal the page is one screen too: the opponents' rows
    // on a smaller felt, mine docked below it, the settlement beside (table-showdown.css).
    const seat = S.mySeat(state);
    const showdown =
      ["comparing", "settled", "waiting"].includes(table.phase) &&
      Boolean(state.you.hand) &&
      Boolean(seat && (seat.in_round || table.result));
    root.classList.toggle("showdown", showdown);
    document.body.classList.toggle("table-showdown", showdown);
    const phaseNode = root.querySelector("[data-testid=phase]");
    phaseNode.dataset.phase = table.phase;
    const last = table.last_round || (table.match && table.match.last_round);
    const roundText = last
      ? fmt(_("Round %(n)s / %(last)s"), { n: table.round_no, last })
      : fmt(_("Round %(n)s"), { n: table.round_no });
    phaseNode.textContent = PHASE_NAMES[table.phase] + (table.round_no ? " · " + roundText : "");
    const shown = schedule.view();
    renderSeats(page, shown);
    renderCenter(page, shown);
    renderArrange(page, shown);
    renderSpecial(page);
    renderSettlement(page);
    renderChat(page);
    controls.askSuggestions();
    tick();
  }

  function tick() {
    controls.autoReady();
    renderTimers(page);
  }

  return { render, tick };
}

// The server's view applied to the page: a snapshot, or events one by one, through the
// reducer (state.js), with what they do besides changing the state — the animation's timers,
// toasts, sounds, chat, the wallet — and then the page is stored and drawn again.

import * as S from "./state.js";
import { C, _, fmt, toast } from "./views/common.js";
import { sound } from "./views/compare.js";
import { onChat } from "./views/chat.js";

// page: the page's context; parts: {schedule, api, storage}.
export function createServerView(page, { schedule, api, storage }) {
  const ui = page.ui;

  function applySnapshot(snap) {
    schedule.cancel();
    page.state = S.applySnapshot(page.state, snap, C.evaluate);
    const you = page.state.you;
    if (you.deadline && you.remaining !== null && you.remaining !== undefined) {
      page.skew = you.deadline - you.remaining - Date.now() / 1000;
    }
    schedule.rewind();
    ui.selected.clear();
    ui.serverFoul = null;
    api.missingNames();
    storage.persist(page);
    page.render();
  }

  function applyEvents(events) {
    let changed = false;
    events.forEach((event) => {
      if (event.version <= page.state.table.version) return;
      before(event);
      const previous = page.state;
      page.state = S.applyEvent(page.state, event);
      after(event, previous);
      changed = true;
    });
    if (changed) {
      storage.persist(page);
      page.render();
    }
  }

  // A new round or a settlement overtakes the animation still playing.
  function before(event) {
    if (event.type === "round_start" || event.type === "settled") schedule.flush();
  }

  // What an event does besides changing the state: the timers, toasts, sounds, the wallet.
  function after(event, previous) {
    const state = page.state;
    const p = event.payload || {};
    const ME = state.me;
    switch (event.type) {
      case "seated":
        if (!state.names[p.position]) api.missingNames();
        else if (p.position !== ME) toast(fmt(_("%(name)s sat down."), { name: page.words.nameOf(p.position) }));
        break;
      case "left":
        if (p.position !== ME) {
          const who = previous.names[p.position] || page.words.nameOf(p.position);
          const text = {
            left: _("%(name)s left the table."),
            ready_timeout: _("%(name)s did not press Ready and went back to the lobby."),
            match_over: _("%(name)s went back to the lobby: the match is over."),
            escaped: _("%(name)s escaped and was removed."),
          }[p.reason];
          toast(fmt(text || _("%(name)s left the table."), { name: who }));
        }
        break;
      case "round_start":
        ui.selected.clear();
        ui.serverFoul = null;
        schedule.rewind();
        break;
      case "hand":
        ui.suggestAsked.clear();
        ui.suggestPending = null;
        schedule.deal();
        break;
      case "arrangement":
        ui.selected.clear();
        ui.serverFoul = null;
        break;
      case "chat":
        onChat(page, p);
        break;
      case "settled": {
        schedule.finish();
        ui.settledAt = Date.now();
        const me = (p.result.players || []).find((pl) => pl.id === page.cfg.player_id);
        if (me) {
          api.refreshBalance(me.delta - (me.fee || 0)); // the table fee goes to the house
          sound("settle");
        }
        break;
      }
      default:
        if (state.compare.timeline.length > previous.compare.timeline.length) {
          schedule.compare(state.compare.timeline[state.compare.timeline.length - 1]);
        }
    }
  }

  return { applySnapshot, applyEvents };
}

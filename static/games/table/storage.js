// What the page keeps in the browser: its view of the table, per room in sessionStorage, so a
// reload sends `since` and continues from it; the last round whose settlement the player has
// seen (closed, or read before being sent away), per room in localStorage, so coming back to
// a room never shows an old one again; and "keep playing", per browser.

import * as S from "./state.js";

const KEEP_KEY = "shisanshui.keep-playing";

export function createStorage(cfg) {
  const STORE_KEY = "shisanshui.table." + cfg.room_id;
  const SEEN_KEY = "shisanshui.seen." + cfg.room_id;

  return {
    settlementSeen: () => Number(localStorage.getItem(SEEN_KEY)) || 0,

    // page: the page's context (state, ui).
    persist(page) {
      const state = page.state;
      try {
        sessionStorage.setItem(
          STORE_KEY,
          JSON.stringify({
            table: state.table,
            you: state.you,
            layout: state.layout,
            compare: state.compare,
            names: state.names,
            goneNames: state.goneNames,
            balance: page.ui.balance,
            settlementSeen: page.ui.settlementSeen,
          }),
        );
      } catch (e) {
        /* storage full or disabled: a reload gets a snapshot */
      }
    },

    restore(page) {
      let saved = null;
      try {
        saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
      } catch (e) {
        saved = null;
      }
      // Mid-comparison the animation's steps are lost with the page: ask for a snapshot then.
      if (!saved || !saved.table || !saved.table.version || saved.table.phase === "comparing") return;
      const state = page.state;
      const compare = saved.compare && Array.isArray(saved.compare.timeline) ? saved.compare : S.freshCompare();
      page.state = Object.assign({}, state, {
        table: saved.table,
        you: saved.you || S.freshYou(),
        layout: saved.layout || state.layout,
        compare,
        names: Object.assign({}, state.names, saved.names || {}),
        goneNames: Object.assign({}, saved.goneNames || {}),
        dealing: null,
      });
      // A stored timeline is one already played (a settled round): shown whole.
      if (compare.timeline.length) page.state = S.finishTimeline(page.state);
      page.ui.settlementSeen = Math.max(page.ui.settlementSeen, saved.settlementSeen || 0);
    },

    forget() {
      sessionStorage.removeItem(STORE_KEY);
    },

    markSettlementSeen(page) {
      page.ui.settlementSeen = Math.max(page.ui.settlementSeen, page.state.table.round_no || 0);
      localStorage.setItem(SEEN_KEY, String(page.ui.settlementSeen));
    },

    keepPlaying: () => localStorage.getItem(KEEP_KEY) === "on",

    setKeepPlaying(on) {
      localStorage.setItem(KEEP_KEY, on ? "on" : "off");
    },
  };
}

// The player's actions that the page itself takes care of: the draft saved a moment after a
// change, the suggestions asked for the 13 cards kept (spare cards), Ready pressed by "keep
// playing", and the buttons outside the views (Ready, Leave, the review, closing the
// settlement, sound). The views' own gestures are set up here too.

import * as S from "./state.js";
import { $ } from "./views/common.js";
import { setUpSound } from "./views/compare.js";
import { setUpArrange } from "./views/arrange.js";
import { setUpSuggestions } from "./views/suggestions.js";
import { setUpSpecial, setUpLeave, askLeave } from "./views/dialogs.js";
import { setUpChat } from "./views/chat.js";

const AUTO_READY_AFTER_MS = 2500;
const SUGGEST_AFTER_MS = 500;
const DRAFT_AFTER_MS = 700;

// page: the page's context (cfg, root, state, ui, words, act(), render()); storage: storage.js.
export function createControls(page, { storage }) {
  const { cfg, ui } = page;
  const keepPlaying = $("keep-playing");
  let suggestTimer = null;
  let draftTimer = null;

  // With spare cards, after a swap: the suggestions for the 13 cards kept, asked once per set
  // of cards (`suggest`), a moment after the last swap.
  function askSuggestions() {
    const state = page.state;
    if (!S.canArrange(state) || !S.spareOf(state.table.config)) return;
    const shown = S.shownSuggestions(state);
    if (shown.list !== null || shown.fromDeal || ui.suggestAsked.has(shown.key)) return;
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(() => {
      const now = S.shownSuggestions(page.state);
      if (!S.canArrange(page.state) || now.list !== null || now.fromDeal || ui.suggestAsked.has(now.key)) return;
      const cards = S.keptCards(page.state.layout);
      if (page.act("suggest", { cards })) {
        ui.suggestAsked.add(now.key);
        ui.suggestPending = { key: now.key, cards };
      }
    }, SUGGEST_AFTER_MS);
  }

  // The layout changed by the player: drawn at once, saved as a draft a moment later.
  function changed() {
    ui.serverFoul = null;
    page.render();
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (S.canArrange(page.state)) page.act("draft", { draft: page.state.layout });
    }, DRAFT_AFTER_MS);
  }

  // "Keep playing": Ready is pressed for the player once the settlement has been up a moment.
  function autoReady() {
    const state = page.state;
    const seat = S.mySeat(state);
    const table = state.table;
    if (!keepPlaying.checked || state.closed || !seat || seat.ready || ui.leaving) return;
    if (!["settled", "waiting"].includes(table.phase) || ui.autoReadyRound === table.round_no) return;
    if (S.lastRoundPlayed(state)) return; // the series or the match is over
    if (table.result && Date.now() - ui.settledAt < AUTO_READY_AFTER_MS) return;
    ui.autoReadyRound = table.round_no;
    page.act("ready");
  }

  function setUp() {
    setUpSound(cfg);
    setUpLeave({
      root: page.root,
      get state() {
        return page.state;
      },
      act: page.act,
      onLeaveButton() {
        if (page.state.closed) {
          window.location.href = cfg.lobby_url;
          return;
        }
        if (S.escapeRisk(page.state)) {
          askLeave(page.state, () => page.act("leave"));
          return;
        }
        if (!S.inRound(page.state)) ui.leaving = true;
        page.act("leave");
      },
    });
    setUpArrange(page);
    setUpSuggestions(page);
    setUpSpecial(page);
    setUpChat(page, page.act);
    $("ready-button").addEventListener("click", () => {
      page.act("ready");
    });
    // The review of my hand in the round just settled: fetched on demand.
    $("review-button").hidden = Boolean(cfg.spectator); // a spectator played no hand
    $("review-button").addEventListener("click", () => {
      const round = page.state.table.round_no;
      const box = $("review-box");
      box.dataset.round = String(round);
      window.ShisanshuiReview.load(`/api/games/rooms/${cfg.room_id}/rounds/${round}/review/`, box, {
        specialName: page.words.specialName,
      });
    });
    $("settlement-close").addEventListener("click", () => {
      storage.markSettlementSeen(page);
      storage.persist(page);
      page.render();
    });
    keepPlaying.checked = storage.keepPlaying();
    keepPlaying.addEventListener("change", () => {
      storage.setKeepPlaying(keepPlaying.checked);
      autoReady();
    });
    window.addEventListener("pagehide", () => storage.persist(page));
  }

  return { askSuggestions, changed, autoReady, setUp };
}

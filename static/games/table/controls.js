// The player's actions that the page itself takes care of: the draft saved a moment after a
// change (and again after a reconnect when the server did not have the last one: a hosted
// hand plays it, RULES.md §9), the suggestions asked for the 13 cards kept (spare cards), Ready pressed by "keep
// playing", and the buttons outside the views (Ready, Leave, the review, closing the
// settlement, sound). The views' own gestures are set up here too.

import * as S from "./state.js";
import { $ } from "./views/common.js";
import { setUpSound } from "./views/compare.js";
import { setUpArrange } from "./views/arrange.js";
import { setUpSuggestions } from "./views/suggestions.js";
import { setUpSpecial, setUpLeave, askLeave } from "./views/dialogs.js";
import { setUpChat } from "./views/chat.js";

// Every card of a layout: the hand, the rows and (spare cards) the tray.
function allCards(layout) {
  return ["hand", "front", "middle", "back", "tray"].flatMap((k) => (Array.isArray(layout[k]) ? layout[k] : []));
}

const AUTO_READY_AFTER_MS = 2500;
const SUGGEST_AFTER_MS = 500;
const DRAFT_AFTER_MS = 700;

// page: the page's context (cfg, root, state, ui, words, act(), render()); storage: storage.js.
export function createControls(page, { storage }) {
  const { cfg, ui } = page;
  const keepPlaying = $("keep-playing");
  let suggestTimer = null;
  let draftTimer = null;
  // The player's changes to the layout counted; those the server has saved; and, oldest
  // first, the count each `draft` on the socket carries (its replies come in order).
  let edits = 0;
  let savedEdits = 0;
  let draftsInFlight = [];

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
    edits += 1;
    page.render();
    saveDraftLater(DRAFT_AFTER_MS);
  }

  function saveDraftLater(ms) {
    clearTimeout(draftTimer);
    draftTimer = setTimeout(saveDraft, ms);
  }

  function saveDraft() {
    if (savedEdits >= edits || !S.canArrange(page.state)) return;
    if (page.act("draft", { draft: page.state.layout })) draftsInFlight.push(edits);
  }

  // The server's reply to a `draft`: saved, or refused (over the draft budget: tried again
  // once the server's `retry_after` has passed).
  function draftAnswered(ok, error) {
    const sent = draftsInFlight.shift();
    if (ok && sent !== undefined) savedEdits = Math.max(savedEdits, sent);
    else if (error && error.code === "rate_limited") {
      saveDraftLater(Math.ceil((Number(error.retry_after) || 1) * 1000));
    }
  }

  // Back on a new socket: replies to the old one's drafts never come. Changes the server did
  // not save are kept over the welcome's draft when the hand is the same, and sent now.
  // before: the layout before the welcome was applied.
  function resumeDraft(before) {
    draftsInFlight = [];
    if (savedEdits >= edits || !S.canArrange(page.state)) return;
    if (S.cardsKey(allCards(before)) === S.cardsKey(allCards(page.state.layout))) {
      page.setLayout(before);
      page.render();
    }
    saveDraft();
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

  return { askSuggestions, changed, draftAnswered, resumeDraft, autoReady, setUp };
}

// The table page: one seated player's live Shisanshui table, driven by ws/table/<room_id>/
// (docs/protocol.md). Native ES modules, no framework, no build step:
//   protocol.js  the socket (hello/since, ping, reconnect, actions by id), no DOM
//   state.js     the pure reducer (snapshot and events in, new state out) and its questions
//   views/*.js   rendering and the player's gestures (they call back here, never the socket)
//   main.js      this file: wiring, timers of the deal and the comparison, persistence
// Classic scripts loaded before: /jsi18n/ (gettext), cards.js (window.ShisanshuiCards) and
// SortableJS (window.Sortable).
//
// Stable hooks for browser tests (data-testid):
//   phase               data-phase="waiting|dealing|special_choice|arranging|comparing|settled"
//   connection-state    data-state="live|reconnecting|closed"
//   my-balance          data-balance="<int>" (updated after a settlement)
//   seat                one per occupied seat, data-position="<n>" (data-me="true" for yours)
//   ready-button, ready-countdown
//   special-dialog, special-yes, special-no
//   hand                the unplaced cards; row-front, row-middle, row-back: the rows
//                       every card element has data-card="AS" (rank then suit); a joker
//                       placed in a full row has data-stands="AS" (what it stands for)
//   tray                with spare cards: the cards set aside (swapped with the 13 kept)
//   set-aside           a player's set-aside cards in the comparison (data-position) and in
//                       the settlement (data-position)
//   sort-rank, sort-suit, reset
//   suggestion          one per suggestion (click applies it)
//   foul-warning        names the rows; data-rows="front,middle"
//   submit-button, arrange-countdown, auto-notice
//   compare-panel, gun-animation, home-run-animation
//   settlement-panel    with one settlement-delta per player:
//                       data-testid="settlement-delta" data-position="<n>" data-delta="<int>"
//   leave-button
//   leave-overlay, leave-question, leave-stay, leave-confirm   (before an escape)
//   ready-timer, arrange-timer, keep-playing, sound-toggle, suggestions-more
//   versus-total        your water against that seat (data-position), in the comparison
import * as S from "./state.js";
import { createConnection } from "./protocol.js";
import { C, _, fmt, $, number, toast, makeWords } from "./views/common.js";
import { renderSeats } from "./views/seats.js";
import { renderCenter, playEffect, setUpSound, sound } from "./views/compare.js";
import { renderArrange, setUpArrange, landCard } from "./views/arrange.js";
import { setUpSuggestions } from "./views/suggestions.js";
import { renderSettlement } from "./views/settlement.js";
import { renderSpecial, setUpSpecial, setUpLeave, askLeave, showClosed, setConnection } from "./views/dialogs.js";
import { renderTimers } from "./views/timers.js";
import { setUpChat, onChat, renderChat } from "./views/chat.js";

const PHASE_NAMES = {
  waiting: _("Waiting"),
  dealing: _("Dealing"),
  special_choice: _("Special hands"),
  arranging: _("Arranging"),
  comparing: _("Comparing"),
  settled: _("Settled"),
};
// Reasons the lobby explains (?left=…) when the table sends a player back to the room list.
const LOBBY_REASONS = ["ready_timeout", "escaped", "insufficient_coins", "left", "match_over"];
const KEEP_KEY = "shisanshui.keep-playing";
const AUTO_READY_AFTER_MS = 2500;

function start() {
  const root = $("table");
  if (!root || !C) return;
  const cfg = JSON.parse($("table-config").textContent);
  const STORE_KEY = "shisanshui.table." + cfg.room_id;
  // The round whose settlement the player has seen (closed, or read before being sent away):
  // kept per room in localStorage, so coming back to a room never shows an old one again.
  const SEEN_KEY = "shisanshui.seen." + cfg.room_id;

  let state = S.initialState(cfg);
  let skew = 0; // server clock minus ours, seconds
  // What only this page knows (not the server's view).
  const ui = {
    selected: new Set(),
    serverFoul: null,
    submitting: false,
    showAllSuggestions: false,
    suggestAsked: new Set(), // keys of the 13-card sets `suggest` was sent for
    suggestPending: null, // {key, cards} of the last `suggest` sent
    balance: cfg.balance,
    settlementSeen: Number(localStorage.getItem(SEEN_KEY)) || 0,
  };
  let leaving = false;
  let settledAt = 0; // when the last settlement arrived (ms), for "keep playing"
  let autoReadyRound = -1; // the round after which "keep playing" pressed Ready

  // The animation steps played so far: the comparison is shown up to `compareReached` ms and
  // my cards up to `dealReached` ms (the timers below move them; a flush moves them to the end).
  let compareReached = -Infinity;
  let dealReached = -Infinity;
  let dealFallbackStart = null; // when a hand came without the deal's start (never, normally)

  const nowSec = () => Date.now() / 1000 + skew;
  const words = makeWords(cfg, () => state);
  const view = () => S.compareAt(state, compareReached);

  const ctx = {
    cfg,
    root,
    ui,
    words,
    get state() {
      return state;
    },
    nowSec,
    landed: () => new Set(S.landedAt(state, dealReached)),
    dealElapsed: () => (state.deal ? (nowSec() - state.deal.started_at) * 1000 : 0),
    setLayout: (layout) => (state = S.withLayout(state, layout)),
    rememberRoundNames: (roundNames) => (state = Object.assign({}, state, { roundNames })),
    act,
    render,
    changed,
  };

  // ---- timers of the deal and the comparison -------------------------------------------------
  let timers = [];
  // Run fn at the server time `epoch` (seconds) + `offsetMs`; at once if that has passed.
  function at(epoch, offsetMs, fn) {
    const due = (epoch - skew) * 1000 + (offsetMs || 0);
    const id = setTimeout(() => {
      timers = timers.filter((t) => t.id !== id);
      fn();
    }, Math.max(0, due - Date.now()));
    timers.push({ id, fn });
  }

  // Play every pending animation step now (a snapshot or a settlement overtakes them).
  function flushTimers() {
    const pending = timers;
    timers = [];
    pending.forEach((t) => {
      clearTimeout(t.id);
      t.fn();
    });
  }

  function scheduleDeal() {
    const dealing = state.dealing;
    const start = dealing.start || dealFallbackStart || nowSec();
    dealFallbackStart = start;
    const hand = state.you.hand;
    hand.forEach((card, i) => {
      const offset = dealing.offsets_ms[i] || 0;
      at(start, offset, () => {
        if (i === 0) sound("deal");
        dealReached = Math.max(dealReached, offset);
        landCard(ctx, card);
      });
    });
  }

  function scheduleCompare(entry) {
    at(state.table.started_at, entry.at, () => {
      compareReached = Math.max(compareReached, entry.at);
      const fx = S.effectOf(entry);
      if (fx) playEffect(fx, words);
      render();
    });
  }

  // ---- persistence (a reload sends `since` and continues from the stored view) ---------------
  function persist() {
    try {
      sessionStorage.setItem(
        STORE_KEY,
        JSON.stringify({
          table: state.table,
          you: state.you,
          layout: state.layout,
          compare: state.compare,
          names: state.names,
          balance: ui.balance,
          settlementSeen: ui.settlementSeen,
        }),
      );
    } catch (e) {
      /* storage full or disabled: a reload gets a snapshot */
    }
  }

  function restore() {
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
    } catch (e) {
      saved = null;
    }
    // Mid-comparison the animation's steps are lost with the page: ask for a snapshot then.
    if (!saved || !saved.table || !saved.table.version || saved.table.phase === "comparing") return;
    const compare = saved.compare && Array.isArray(saved.compare.timeline) ? saved.compare : S.freshCompare();
    state = Object.assign({}, state, {
      table: saved.table,
      you: saved.you || S.freshYou(),
      layout: saved.layout || state.layout,
      compare,
      names: Object.assign({}, state.names, saved.names || {}),
      dealing: null,
    });
    // A stored timeline is one already played (a settled round): shown whole.
    if (compare.timeline.length) state = S.finishTimeline(state);
    ui.settlementSeen = Math.max(ui.settlementSeen, saved.settlementSeen || 0);
  }

  // ---- the socket ----------------------------------------------------------------------------
  const connection = createConnection({
    url: cfg.ws_url,
    since: () => state.table.version || null,
    onWelcome(message) {
      setConnection(root, "live");
      // A `suggest` asked on a socket that dropped is never answered: forget it and ask again
      // for the cards then kept (not "Finding suggestions…" for good).
      if (ui.suggestPending) {
        ui.suggestAsked.delete(ui.suggestPending.key);
        ui.suggestPending = null;
      }
      if (message.snapshot) applySnapshot(message.snapshot);
      else applyEvents(message.events || []);
      askSuggestions();
    },
    onEvents: (events) => applyEvents(events),
    onHandSuggestions(message) {
      // The deal's, a moment after the hand (or after a welcome that did not bring them).
      state = S.withHandSuggestions(state, message);
      render();
    },
    onSuggestions(message) {
      state = S.withSuggested(state, message);
      if (ui.suggestPending && ui.suggestPending.key === S.cardsKey(message.cards || [])) ui.suggestPending = null;
      render();
    },
    onOk(message, type) {
      if (type === "submit") ui.submitting = false;
      if (type === "leave" && !S.inRound(state)) leaving = true;
      if (type === "leave" && S.inRound(state)) {
        const seat = S.mySeat(state);
        if (seat && S.committed(seat)) {
          // The hand is in: nothing to wait for here, no penalty.
          leaving = true;
          window.location.href = cfg.lobby_url;
          return;
        }
        toast(_("You left the round: it is played for you."));
      }
      render();
    },
    onError(message, type) {
      const error = message.error || {};
      if (type === "submit") ui.submitting = false;
      if (type === "draft") return; // drafts are best effort
      if (type === "suggest") {
        // No suggestions for these 13 cards: none are shown (not asked again).
        const asked = ui.suggestPending;
        ui.suggestPending = null;
        if (asked) state = S.withSuggested(state, { cards: asked.cards, suggestions: [] });
        if (error.code === "rate_limited") toast(errorText(error), true);
        render();
        return;
      }
      if (error.code === "foul") {
        ui.serverFoul = error.rows || [];
        render();
      }
      if (error.code === "not_at_table") closeForGood("left");
      toast(errorText(error), true);
      render();
    },
    onReconnecting: () => setConnection(root, "reconnecting"),
    onFinalClose: (reason) => closeForGood(reason),
  });

  function act(type, fields) {
    const ok = connection.act(type, fields);
    if (!ok && type !== "draft") toast(_("Not connected. Trying again…"), true);
    return ok;
  }

  function markSettlementSeen() {
    ui.settlementSeen = Math.max(ui.settlementSeen, state.table.round_no || 0);
    localStorage.setItem(SEEN_KEY, String(ui.settlementSeen));
  }

  function coinText(value) {
    return typeof value === "number" ? number(value) : "?";
  }

  function closeForGood(reason) {
    state = S.markClosed(state);
    connection.stop();
    sessionStorage.removeItem(STORE_KEY);
    const table = state.table;
    const sentAway = state.sentAway;
    const unread = Boolean(table.result) && ui.settlementSeen < table.round_no;
    if (reason === "left" && leaving && table.phase !== "comparing") {
      window.location.href = cfg.lobby_url;
      return;
    }
    let href = null;
    if (reason === "left" && sentAway && LOBBY_REASONS.includes(sentAway.reason) && !leaving) {
      // Sent back to the room list by the table: the lobby says why. The settlement of the
      // round just played stays readable here first when there is one to read.
      const url = cfg.lobby_url + "?left=" + encodeURIComponent(sentAway.reason);
      if (["ready_timeout", "match_over"].includes(sentAway.reason) || !unread) {
        markSettlementSeen();
        window.location.href = url;
        return;
      }
      href = url;
    }
    const why = {
      left:
        sentAway && sentAway.reason === "insufficient_coins"
          ? fmt(
              _("You went back to the room list: this table needs at least %(minimum)s coins and you have %(balance)s."),
              { minimum: coinText(sentAway.minimum), balance: coinText(sentAway.balance) },
            )
          : _("You are no longer at this table."),
      login: _("You are logged out. Log in again."),
      not_seated: _("You are not seated at this table."),
    }[reason];
    setConnection(root, "closed", _("Closed"));
    showClosed(why, href);
    render();
  }

  function errorText(error) {
    const known = {
      foul: _("Foul: a row beats the one after it."),
      wrong_phase: _("Not now: the table is in another phase."),
      already_ready: _("You are already ready."),
      already_submitted: _("You already submitted."),
      choose_special_first: _("Answer the special hand question first."),
      not_in_round: _("You do not play this round."),
      escaped: _("You have left this round."),
      insufficient_coins: fmt(
        _("You need at least %(minimum)s coins to play at this table; you have %(balance)s."),
        { minimum: coinText(error.minimum), balance: coinText(error.balance) },
      ),
      rate_limited: _("Too many requests. Wait a moment and try again."),
      server_error: _("Something went wrong. Try again."),
    };
    return known[error.code] || error.message || error.code;
  }

  // ---- applying the server's view ------------------------------------------------------------
  function applySnapshot(snap) {
    timers.forEach((t) => clearTimeout(t.id));
    timers = [];
    state = S.applySnapshot(state, snap, C.evaluate);
    const you = state.you;
    if (you.deadline && you.remaining !== null && you.remaining !== undefined) {
      skew = you.deadline - you.remaining - Date.now() / 1000;
    }
    compareReached = -Infinity;
    dealReached = -Infinity;
    ui.selected.clear();
    ui.serverFoul = null;
    missingNames();
    persist();
    render();
  }

  function applyEvents(events) {
    let changed = false;
    events.forEach((event) => {
      if (event.version <= state.table.version) return;
      before(event);
      const previous = state;
      state = S.applyEvent(state, event);
      after(event, previous);
      changed = true;
    });
    if (changed) {
      persist();
      render();
    }
  }

  // What an event does besides changing the state: the timers, toasts, sounds, the wallet.
  function before(event) {
    // A new round or a settlement overtakes the animation still playing.
    if (event.type === "round_start" || event.type === "settled") flushTimers();
  }

  function after(event, previous) {
    const p = event.payload || {};
    const ME = state.me;
    switch (event.type) {
      case "seated":
        if (!state.names[p.position]) missingNames();
        else if (p.position !== ME) toast(fmt(_("%(name)s sat down."), { name: words.nameOf(p.position) }));
        break;
      case "left":
        if (p.position !== ME) {
          const who = previous.names[p.position] || words.nameOf(p.position);
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
        compareReached = -Infinity;
        dealReached = -Infinity;
        break;
      case "hand":
        ui.suggestAsked.clear();
        ui.suggestPending = null;
        dealReached = -Infinity;
        dealFallbackStart = null;
        scheduleDeal();
        break;
      case "arrangement":
        ui.selected.clear();
        ui.serverFoul = null;
        break;
      case "chat":
        onChat(ctx, p);
        break;
      case "settled": {
        compareReached = Infinity;
        settledAt = Date.now();
        const me = (p.result.players || []).find((pl) => pl.id === cfg.player_id);
        if (me) {
          refreshBalance(me.delta);
          sound("settle");
        }
        break;
      }
      default:
        if (state.compare.timeline.length > previous.compare.timeline.length) {
          scheduleCompare(state.compare.timeline[state.compare.timeline.length - 1]);
        }
    }
  }

  function setBalance(value) {
    ui.balance = value;
    const node = root.querySelector("[data-testid=my-balance]");
    node.dataset.balance = String(value);
    node.textContent = number(value);
    const header = document.querySelector("[data-header-balance]");
    if (header) header.textContent = number(value);
  }

  // The wallet after a settlement: asked from the server (a reload may already include it).
  function refreshBalance(delta) {
    const guess = ui.balance + delta;
    fetch(cfg.wallet_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((wallet) => setBalance(wallet && Number.isInteger(wallet.balance) ? wallet.balance : guess))
      .catch(() => setBalance(guess))
      .finally(render);
  }

  // Usernames of seats the page did not know: the room's public row has them.
  let fetchingNames = false;
  function missingNames() {
    const unknown = Object.keys(state.table.seats).some((p) => !state.names[p]);
    if (!unknown || fetchingNames) return;
    fetchingNames = true;
    fetch(cfg.room_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((room) => {
        if (room && room.players) {
          const found = {};
          room.players.forEach((pl) => (found[pl.position] = pl.name || pl.username));
          state = S.withNames(state, found);
        }
        render();
      })
      .catch(() => {})
      .finally(() => (fetchingNames = false));
  }

  // ---- rendering -----------------------------------------------------------------------------
  function render() {
    const table = state.table;
    root.dataset.phase = table.phase;
    // While the player's own round is dealt and arranged, everything fits one screen: the
    // felt shrinks to a strip of the opponents, the hand and rows take the rest.
    const playing = S.inRound(state) && ["dealing", "special_choice", "arranging"].includes(table.phase);
    root.classList.toggle("compact", playing && Boolean(state.you.hand));
    document.body.classList.toggle("table-compact", playing && Boolean(state.you.hand));
    const phaseNode = root.querySelector("[data-testid=phase]");
    phaseNode.dataset.phase = table.phase;
    const last = table.last_round || (table.match && table.match.last_round);
    const roundText = last
      ? fmt(_("Round %(n)s / %(last)s"), { n: table.round_no, last })
      : fmt(_("Round %(n)s"), { n: table.round_no });
    phaseNode.textContent = PHASE_NAMES[table.phase] + (table.round_no ? " · " + roundText : "");
    const shown = view();
    renderSeats(ctx, shown);
    renderCenter(ctx, shown);
    renderArrange(ctx, shown);
    renderSpecial(ctx);
    renderSettlement(ctx);
    renderChat(ctx);
    askSuggestions();
    tick();
  }

  // With spare cards, after a swap: the suggestions for the 13 cards kept, asked once per set
  // of cards (`suggest`), a moment after the last swap.
  let suggestTimer = null;
  function askSuggestions() {
    if (!S.canArrange(state) || !S.spareOf(state.table.config)) return;
    const shown = S.shownSuggestions(state);
    if (shown.list !== null || shown.fromDeal || ui.suggestAsked.has(shown.key)) return;
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(() => {
      const now = S.shownSuggestions(state);
      if (!S.canArrange(state) || now.list !== null || now.fromDeal || ui.suggestAsked.has(now.key)) return;
      const cards = S.keptCards(state.layout);
      if (act("suggest", { cards })) {
        ui.suggestAsked.add(now.key);
        ui.suggestPending = { key: now.key, cards };
      }
    }, 500);
  }

  function tick() {
    autoReady();
    renderTimers(ctx);
  }

  // ---- the player's actions ------------------------------------------------------------------
  let draftTimer = null;
  function changed() {
    ui.serverFoul = null;
    render();
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (S.canArrange(state)) act("draft", { draft: state.layout });
    }, 700);
  }

  // "Keep playing": Ready is pressed for the player once the settlement has been up a moment.
  const keepPlaying = $("keep-playing");
  function autoReady() {
    const seat = S.mySeat(state);
    const table = state.table;
    if (!keepPlaying.checked || state.closed || !seat || seat.ready || leaving) return;
    if (!["settled", "waiting"].includes(table.phase) || autoReadyRound === table.round_no) return;
    if (S.lastRoundPlayed(state)) return; // the series or the match is over
    if (table.result && Date.now() - settledAt < AUTO_READY_AFTER_MS) return;
    autoReadyRound = table.round_no;
    act("ready");
  }

  function setUp() {
    setUpSound(cfg);
    setUpLeave({
      root,
      get state() {
        return state;
      },
      act,
      onLeaveButton() {
        if (state.closed) {
          window.location.href = cfg.lobby_url;
          return;
        }
        if (S.escapeRisk(state)) {
          askLeave(state, () => act("leave"));
          return;
        }
        if (!S.inRound(state)) leaving = true;
        act("leave");
      },
    });
    setUpArrange(ctx);
    setUpSuggestions(ctx);
    setUpSpecial(ctx);
    setUpChat(ctx, act);
    $("ready-button").addEventListener("click", () => {
      act("ready");
    });
    // The review of my hand in the round just settled (issue 17): fetched on demand.
    $("review-button").hidden = Boolean(cfg.spectator); // a spectator played no hand
    $("review-button").addEventListener("click", () => {
      const round = state.table.round_no;
      const box = $("review-box");
      box.dataset.round = String(round);
      window.ShisanshuiReview.load(`/api/games/rooms/${cfg.room_id}/rounds/${round}/review/`, box, {
        specialName: words.specialName,
      });
    });
    $("settlement-close").addEventListener("click", () => {
      markSettlementSeen();
      persist();
      render();
    });
    keepPlaying.checked = localStorage.getItem(KEEP_KEY) === "on";
    keepPlaying.addEventListener("change", () => {
      localStorage.setItem(KEEP_KEY, keepPlaying.checked ? "on" : "off");
      autoReady();
    });
    window.addEventListener("pagehide", () => persist());
  }

  restore();
  setUp();
  setBalance(ui.balance);
  render();
  setInterval(tick, 250);
  setConnection(root, "reconnecting", _("Connecting…"));
  connection.connect();
}

start();

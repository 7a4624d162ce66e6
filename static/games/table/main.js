// The table page: one seated player's live Shisanshui table, driven by ws/table/<room_id>/
// (docs/protocol.md). Native ES modules, no framework, no build step:
//   protocol.js  the socket client (hello/since, ping, reconnect, actions by id), no DOM
//   state.js     the pure reducer (snapshot and events in, new state out) and its questions
//   views/*.js   rendering and the player's gestures (they call back here, never the socket)
//   main.js      this file: the page's context, wiring the parts below
//   socket.js, server.js   the socket's messages, the server's view applied with its effects
//   schedule.js  the deal's and the comparison's animation at their server times
//   render.js, controls.js, storage.js, api.js   drawing; the page's own actions; the
//                browser's storage; the wallet and names asked from the HTTP API
//   wakelock.js  the screen kept awake while my round is in play (render.js says when)
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
//   sort                data-order="rank|suit|count": the hand area's order (a press: the next)
//   reset
//   handtype-<type>     one per hand type (pair … straight_flush, five_of_a_kind with the
//                       variant decks): disabled when the unplaced cards hold none;
//                       data-groups="<n>"; a press selects the next group of the type
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
import { C, $, _, makeWords } from "./views/common.js";
import { setConnection } from "./views/dialogs.js";
import { createApi } from "./api.js";
import { createControls } from "./controls.js";
import { createRender } from "./render.js";
import { createSchedule } from "./schedule.js";
import { createServerView } from "./server.js";
import { createSocket } from "./socket.js";
import { createStorage } from "./storage.js";
import { createWakeLock } from "./wakelock.js";

function start() {
  const root = $("table");
  if (!root || !C) return;
  const cfg = JSON.parse($("table-config").textContent);
  const storage = createStorage(cfg);

  // The page's context, which the views get as `ctx`: the state, what only this page knows,
  // and the callbacks of the parts wired below.
  const page = {
    cfg,
    root,
    state: S.initialState(cfg),
    skew: 0, // server clock minus ours, seconds
    // What only this page knows (not the server's view).
    ui: {
      selected: new Set(),
      serverFoul: null,
      submitting: false,
      showAllSuggestions: false,
      sortOrder: "rank", // the hand area's order: rank, suit or count
      sortedHand: null, // the hand that order is for (a new hand opens by rank)
      handType: null, // the hand-type button last pressed (its group is the selection)
      suggestAsked: new Set(), // keys of the 13-card sets `suggest` was sent for
      suggestPending: null, // {key, cards} of the last `suggest` sent
      balance: cfg.balance,
      settlementSeen: storage.settlementSeen(),
      leaving: false, // the player asked to leave (no escape to warn about)
      settledAt: 0, // when the last settlement arrived (ms), for "keep playing"
      autoReadyRound: -1, // the round after which "keep playing" pressed Ready
      goneReason: null, // why the table sent me away while the page was not connected
    },
    nowSec: () => Date.now() / 1000 + page.skew,
    landed: () => schedule.landed(),
    dealElapsed: () => (page.state.deal ? (page.nowSec() - page.state.deal.started_at) * 1000 : 0),
    setLayout: (layout) => (page.state = S.withLayout(page.state, layout)),
    rememberRoundNames: (roundNames) => (page.state = Object.assign({}, page.state, { roundNames })),
  };
  page.words = makeWords(cfg, () => page.state);

  const schedule = createSchedule(page);
  const api = createApi(page);
  const controls = createControls(page, { storage });
  const server = createServerView(page, { schedule, api, storage });
  const socket = createSocket(page, { server, storage, controls });
  const wakeLock = createWakeLock();
  const { render, tick } = createRender(page, { schedule, controls, wakeLock });
  page.act = socket.act;
  page.render = render;
  page.changed = controls.changed;

  storage.restore(page);
  controls.setUp();
  api.setBalance(page.ui.balance);
  render();
  setInterval(tick, 250);
  setConnection(root, "reconnecting", _("Connecting…"));
  socket.connect();
}

start();

// The page's state from nothing and from the server's snapshot: `initialState(cfg)` before the
// socket says anything, `applySnapshot(state, snap)` when a welcome brings a full view. Both
// start the round's local parts afresh (the layout, the deal, the comparison's timeline).

import { ROWS, emptyLayout, jokersIn, layoutFromYou, spareOf } from "./layout.js";

export function freshTable(capacity) {
  return {
    version: 0,
    phase: "waiting",
    round_no: 0,
    capacity,
    started_at: null,
    deadline: null,
    arrange_deadline: null,
    duration_ms: null,
    config: null,
    seats: {},
    result: null,
    match: null, // a duplicate match's table: {last_round, held}
    last_round: null,
  };
}

export function freshYou() {
  return {
    hand: null,
    special: null,
    special_choice: null,
    arrangement: null,
    auto: null,
    draft: null,
    suggestions: null,
    advice: null,
    special_unused: null,
    deadline: null,
  };
}

// rows[position][row] = {cards, category, water} and specials[position] known from a snapshot;
// the timeline holds the comparison's timed events, due `at` ms after `epoch` (the comparing
// phase's started_at); once `done` (a settlement, a new round) all of it is shown.
// `unused[position]`: the cards a seat set aside (spare cards), known from a snapshot.
export function freshCompare() {
  return { rows: {}, specials: {}, unused: {}, epoch: null, timeline: [], done: false };
}

// cfg: the page's #table-config (position, player_id, username, seats, base_score, names,
// gone_names, opening).
export function initialState(cfg) {
  return {
    me: cfg.position,
    playerId: cfg.player_id,
    username: cfg.username,
    baseScore: cfg.base_score,
    table: freshTable(cfg.seats),
    opening: cfg.opening || null, // how a fresh hand opens (layout.js openingLayout)
    you: freshYou(),
    layout: emptyLayout(),
    deal: null, // the `deal` event's payload (pace of the card backs)
    dealing: null, // {start, offsets_ms} while my hand lands; null: every card has landed
    compare: freshCompare(),
    names: Object.assign({}, cfg.names || {}),
    roundNames: {}, // player id -> name, for the settlement of players who have since left
    goneNames: Object.assign({}, cfg.gone_names || {}), // position -> name of who left since the round on screen began
    sentAway: null, // the `left` event that sent this player away
    suggested: {}, // cardsKey(13 kept cards) -> the `suggest` reply's suggestions (spare cards)
    closed: false,
  };
}

// `evaluate(cards, a2345)` (cards.js) names a revealed row's category; optional.
export function applySnapshot(state, snap, evaluate) {
  const seats = {};
  snap.seats.forEach((s) => (seats[s.position] = s));
  const table = {
    version: snap.version,
    phase: snap.phase,
    round_no: snap.round_no,
    capacity: snap.capacity,
    started_at: snap.started_at,
    deadline: snap.deadline,
    arrange_deadline: snap.arrange_deadline,
    duration_ms: null,
    config: snap.config,
    seats,
    result: snap.result,
    match: snap.match || null,
    chat_text: snap.chat_text !== false,
    last_round: snap.last_round || null, // a series' or a match's last round
  };
  const you = Object.assign(freshYou(), snap.you || {});
  const compare = freshCompare();
  snap.seats.forEach((s) => {
    if (!s.revealed) return;
    if (Array.isArray(s.revealed.unused)) compare.unused[s.position] = s.revealed.unused;
    if (s.revealed.special) compare.specials[s.position] = s.revealed;
    else {
      compare.rows[s.position] = {};
      ROWS.forEach((r) => {
        let category = null;
        try {
          if (evaluate) category = evaluate(s.revealed[r], snap.config && snap.config.a2345).category;
        } catch (e) {
          /* not a row */
        }
        const jokers = jokersIn(s.revealed[r], s.revealed.jokers);
        compare.rows[s.position][r] = { cards: s.revealed[r], category, water: null, jokers };
      });
    }
  });
  return Object.assign({}, state, {
    table,
    you,
    layout: layoutFromYou(you, spareOf(snap.config), state.opening),
    deal: null,
    dealing: null,
    compare,
    suggested: {},
  });
}

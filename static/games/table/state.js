// The table page's state, as a pure reducer: no DOM, no timers, no globals, no clock.
// `applySnapshot(state, snap)` and `applyEvent(state, event)` return a new state and never
// change the one they are given (what changes is copied). The comparison's and the deal's
// timed events are kept as a timeline; `compareAt(state, elapsedMs)` and
// `landedAt(state, elapsedMs)` say what is visible at a moment, and the page (main.js)
// schedules its renders, effects and sounds at those moments.
//
// Variant decks (docs/protocol.md "Variant decks", RULES.md §12): with spare cards the hand
// holds 13 + spare_cards cards and the layout has a `tray` of the ones set aside (swapped with
// the 13 by the player, never placed in a row); jokers in a revealed row carry what they stand
// for (`jokers`); each player's set-aside cards are shown at the reveal (`reveal_unused`).

export const ROWS = ["front", "middle", "back"];
export const ROW_SIZE = { front: 3, middle: 5, back: 5 };
export const PLAY_PHASES = ["special_choice", "arranging"];
export const ROUND_PHASES = ["dealing", "special_choice", "arranging", "comparing"];
const TIMED = ["reveal", "row_result", "gun", "home_run", "reveal_special", "reveal_unused"];
export const HAND_SIZE = 13;

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

// The zones of the layout: `tray` only with spare cards (the cards set aside).
export function emptyLayout(spare) {
  const layout = { hand: [], front: [], middle: [], back: [] };
  if (spare) layout.tray = [];
  return layout;
}

// rows[position][row] = {cards, category, water} and specials[position] known from a snapshot;
// the timeline holds the comparison's timed events, due `at` ms after `epoch` (the comparing
// phase's started_at); once `done` (a settlement, a new round) all of it is shown.
// `unused[position]`: the cards a seat set aside (spare cards), known from a snapshot.
export function freshCompare() {
  return { rows: {}, specials: {}, unused: {}, epoch: null, timeline: [], done: false };
}

// cfg: the page's #table-config (position, player_id, username, seats, base_score, names).
export function initialState(cfg) {
  return {
    me: cfg.position,
    playerId: cfg.player_id,
    username: cfg.username,
    baseScore: cfg.base_score,
    table: freshTable(cfg.seats),
    you: freshYou(),
    layout: emptyLayout(),
    deal: null, // the `deal` event's payload (pace of the card backs)
    dealing: null, // {start, offsets_ms} while my hand lands; null: every card has landed
    compare: freshCompare(),
    names: Object.assign({}, cfg.names || {}),
    roundNames: {}, // player id -> name, for the settlement of players who have since left
    sentAway: null, // the `left` event that sent this player away
    suggested: {}, // cardsKey(13 kept cards) -> the `suggest` reply's suggestions (spare cards)
    closed: false,
  };
}

// ---- small immutable updates ---------------------------------------------------------------
function withTable(state, patch) {
  return Object.assign({}, state, { table: Object.assign({}, state.table, patch) });
}

function withSeat(state, position, patch) {
  const seat = state.table.seats[position];
  if (!seat) return state;
  const seats = Object.assign({}, state.table.seats, { [position]: Object.assign({}, seat, patch) });
  return withTable(state, { seats });
}

function withYou(state, patch) {
  return Object.assign({}, state, { you: Object.assign({}, state.you, patch) });
}

function mapSeats(seats, patch) {
  const out = {};
  Object.keys(seats).forEach((p) => (out[p] = Object.assign({}, seats[p], patch(seats[p]))));
  return out;
}

// ---- the server's view ---------------------------------------------------------------------
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
    layout: layoutFromYou(you, spareOf(snap.config)),
    deal: null,
    dealing: null,
    compare,
    suggested: {},
  });
}

// ---- variant decks -------------------------------------------------------------------------
export function spareOf(config) {
  const n = config && config.spare_cards;
  return Number.isInteger(n) && n > 0 ? n : 0;
}

// How many cards each player is dealt: 13, or 16 with spare cards.
export function handSize(config) {
  return HAND_SIZE + spareOf(config);
}

// The part of a joker map ({"RJ": "AS", ...}) for the jokers of `cards`; null when none.
export function jokersIn(cards, jokers) {
  if (!jokers || typeof jokers !== "object" || !Array.isArray(cards)) return null;
  const out = {};
  cards.forEach((c) => {
    if (typeof jokers[c] === "string") out[c] = jokers[c];
  });
  return Object.keys(out).length ? out : null;
}

// A canonical key of a set of cards (order does not matter).
export function cardsKey(cards) {
  return cards.slice().sort().join(" ");
}

function sameSet(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && cardsKey(a) === cardsKey(b);
}

// `cards` when they are `n` distinct cards of `hand`, else null.
function cardsOf(cards, hand, n) {
  if (!Array.isArray(cards) || cards.length !== n || new Set(cards).size !== n) return null;
  return cards.every((c) => hand.includes(c)) ? cards.slice() : null;
}

// The 13 cards kept (the hand area and the rows): the tray's are set aside.
export function keptCards(layout) {
  return layout.hand.concat(layout.front, layout.middle, layout.back);
}

// The cards first set aside: those of the best suggestion (suggestions[0].unused), else the
// last dealt.
export function initialTray(hand, suggestions, spare) {
  if (!spare) return [];
  const best = Array.isArray(suggestions) && suggestions.length ? suggestions[0] : null;
  return cardsOf(best && best.unused, hand, spare) || hand.slice(hand.length - spare);
}

// The layout of a fresh hand: every card in the hand area, but the tray's.
export function initialLayout(hand, suggestions, spare) {
  const layout = emptyLayout(spare);
  if (!spare) {
    layout.hand = hand.slice();
    return layout;
  }
  layout.tray = initialTray(hand, suggestions, spare);
  layout.hand = hand.filter((c) => !layout.tray.includes(c));
  return layout;
}

// Exchange a card of the tray with one of the 13 kept (in the hand area or a row): each takes
// the other's place. Null when the two are not one tray card and one kept card.
export function swapCards(layout, a, b) {
  const tray = layout.tray || [];
  const zones = ["hand"].concat(ROWS);
  const inTray = (c) => tray.includes(c);
  if (inTray(a) === inTray(b)) return null;
  const spareCard = inTray(a) ? a : b;
  const kept = inTray(a) ? b : a;
  const zone = zones.find((z) => layout[z].includes(kept));
  if (!zone) return null;
  const next = copyLayout(layout);
  next[zone] = layout[zone].map((c) => (c === kept ? spareCard : c));
  next.tray = tray.map((c) => (c === spareCard ? kept : c));
  return next;
}

export function copyLayout(layout) {
  const next = { hand: layout.hand.slice(), front: layout.front.slice(), middle: layout.middle.slice(), back: layout.back.slice() };
  if (layout.tray) next.tray = layout.tray.slice();
  return next;
}

// A suggestion applied: its rows; its `unused` (a suggestion of the deal, with spare cards)
// becomes the tray, else the tray stays (a `suggest` reply is for the 13 kept).
export function applySuggestion(layout, suggestion, hand, spare) {
  const rows = { front: suggestion.front.slice(), middle: suggestion.middle.slice(), back: suggestion.back.slice() };
  const next = Object.assign(emptyLayout(spare), rows);
  const placed = new Set(rows.front.concat(rows.middle, rows.back));
  if (spare) {
    const own = cardsOf(suggestion.unused, hand, spare);
    next.tray = (own || layout.tray || []).filter((c) => !placed.has(c));
  }
  const aside = new Set(next.tray || []);
  next.hand = (hand || []).filter((c) => !placed.has(c) && !aside.has(c));
  return next;
}

// Every card placed (the rows full, the hand area empty) and, with spare cards, the tray full.
export function readyToSubmit(layout, spare) {
  const rowsFull = ROWS.every((r) => layout[r].length === ROW_SIZE[r]);
  return rowsFull && layout.hand.length === 0 && (!spare || (layout.tray || []).length === spare);
}

// The `submit` message's fields: the rows and, with spare cards, the tray as `unused`.
export function submitFields(layout, spare) {
  const fields = { front: layout.front.slice(), middle: layout.middle.slice(), back: layout.back.slice() };
  if (spare) fields.unused = (layout.tray || []).slice();
  return fields;
}

// Whether the hand held came live without its suggestions (`"suggestions": null`), which
// follow in a `hand_suggestions` message of their own (docs/protocol.md).
export function dealSuggestionsPending(state) {
  return Boolean(state.you.hand) && state.you.suggestions === null;
}

// The suggestions that fit the cards kept: the deal's while the tray is one a deal suggestion
// sets aside (without spare cards, always), else the `suggest` reply for these 13 cards.
// {list (null: not known yet), key (of the 13 kept), fromDeal}. While the deal's are on their
// way, none is known yet (fromDeal: they are the deal's to come, nothing is asked).
export function shownSuggestions(state) {
  const you = state.you;
  const spare = spareOf(state.table.config);
  const key = spare ? cardsKey(keptCards(state.layout)) : null;
  if (dealSuggestionsPending(state)) return { list: null, key, fromDeal: true };
  const deal = you.suggestions || [];
  if (!spare) return { list: deal, key: null, fromDeal: true };
  const tray = state.layout.tray || [];
  if (deal.some((s) => sameSet(s.unused, tray))) return { list: deal, key, fromDeal: true };
  const list = state.suggested[key];
  return { list: Array.isArray(list) ? list : null, key, fromDeal: false };
}

// The deal's suggestions {cards, suggestions} (the `hand_suggestions` message, a moment after
// the hand): kept when they are for the hand held. With spare cards, a layout still as
// the hand came (nothing moved) sets aside what the best of them does, as a hand that came
// with them would have.
export function withHandSuggestions(state, message) {
  const hand = state.you.hand;
  if (!hand || !message || !Array.isArray(message.suggestions) || !sameSet(message.cards, hand)) return state;
  const next = withYou(state, { suggestions: message.suggestions });
  const spare = spareOf(state.table.config);
  const untouched = JSON.stringify(initialLayout(hand, state.you.suggestions, spare));
  if (spare && JSON.stringify(state.layout) === untouched) {
    next.layout = initialLayout(hand, message.suggestions, spare);
  }
  return next;
}

// The `suggest` reply {id, cards, suggestions}, kept for those 13 cards (when they are 13 of
// my hand; a reply for another hand is dropped). At most 16 replies are kept.
export function withSuggested(state, message) {
  const hand = state.you.hand || [];
  const cards = message && message.cards;
  if (!cardsOf(cards, hand, HAND_SIZE) || !Array.isArray(message.suggestions)) return state;
  const keys = Object.keys(state.suggested);
  const suggested = {};
  keys.slice(Math.max(0, keys.length - 15)).forEach((k) => (suggested[k] = state.suggested[k]));
  suggested[cardsKey(cards)] = message.suggestions;
  return Object.assign({}, state, { suggested });
}

// What each joker of a full row stands for: the server's (an arrangement's or a reveal's
// `jokers`) when it names them, else `evaluate(row).jokers` (cards.js). Null when none.
export function rowJokers(cards, known, size, evaluate, a2345) {
  if (!cards.some((c) => c === "RJ" || c === "BJ") || cards.length !== size) return null;
  const server = jokersIn(cards, known);
  if (server && Object.keys(server).length === cards.filter((c) => c === "RJ" || c === "BJ").length) {
    return server;
  }
  try {
    return jokersIn(cards, evaluate(cards, a2345).jokers);
  } catch (e) {
    return null;
  }
}

// The local arrangement from `you`: the submitted rows, or the hand with the saved draft (its
// tray too, with spare cards).
export function layoutFromYou(you, spare) {
  const hand = you.hand || [];
  const a = you.arrangement;
  if (a) {
    const layout = { hand: [], front: a.front.slice(), middle: a.middle.slice(), back: a.back.slice() };
    if (spare) {
      const placed = new Set(a.front.concat(a.middle, a.back));
      layout.tray = Array.isArray(a.unused) ? a.unused.slice() : hand.filter((c) => !placed.has(c));
    }
    return layout;
  }
  const draft = you.draft;
  if (!draft || typeof draft !== "object") return initialLayout(hand, you.suggestions, spare);
  const layout = emptyLayout(spare);
  const left = new Set(hand);
  if (spare) {
    layout.tray = cardsOf(draft.tray, hand, spare) || initialTray(hand, you.suggestions, spare);
    layout.tray.forEach((c) => left.delete(c));
  }
  ROWS.forEach((r) => {
    const cards = Array.isArray(draft[r]) ? draft[r] : [];
    cards.forEach((c) => {
      if (left.has(c) && layout[r].length < ROW_SIZE[r]) {
        left.delete(c);
        layout[r].push(c);
      }
    });
  });
  const order = Array.isArray(draft.hand) ? draft.hand.filter((c) => left.has(c)) : [];
  layout.hand = order.concat(hand.filter((c) => left.has(c) && !order.includes(c)));
  return layout;
}

// One event of the wire format {version, type, payload}; one at or below the state's version
// is ignored (the same state comes back).
export function applyEvent(state, event) {
  if (event.version <= state.table.version) return state;
  const apply = EVENTS[event.type];
  const next = apply ? apply(state, event.payload || {}) : state;
  return withTable(next, { version: event.version });
}

export function applyEvents(state, events) {
  return events.reduce(applyEvent, state);
}

function addTimed(state, type, p) {
  // A row's result (and the cards set aside, shown with the back row's) right after its reveal.
  const at = p.offset_ms + (type === "row_result" || type === "reveal_unused" ? 1 : 0);
  const entry = { type, at, seq: state.compare.timeline.length, payload: p };
  return Object.assign({}, state, {
    compare: Object.assign({}, state.compare, {
      epoch: state.table.started_at,
      timeline: state.compare.timeline.concat([entry]),
    }),
  });
}

const EVENTS = {
  seated(state, p) {
    const seats = Object.assign({}, state.table.seats, {
      [p.position]: {
        position: p.position,
        player: p.player,
        ready: false,
        ready_deadline: p.ready_deadline,
        connected: true,
        in_round: false,
        hosted: false,
        escaped: false,
        left: false,
        done: false,
        auto: null,
        revealed: null,
      },
    });
    let next = withTable(state, { seats });
    if (p.player === state.playerId) {
      next = Object.assign({}, next, { names: Object.assign({}, state.names, { [p.position]: state.username }) });
    }
    return next;
  },
  ready(state, p) {
    return withSeat(state, p.position, { ready: true });
  },
  left(state, p) {
    const seats = Object.assign({}, state.table.seats);
    delete seats[p.position];
    let next = withTable(state, { seats });
    if (p.position === state.me) next = Object.assign({}, next, { sentAway: p });
    else {
      const names = Object.assign({}, state.names);
      delete names[p.position];
      next = Object.assign({}, next, { names });
    }
    return next;
  },
  config(state, p) {
    return withTable(state, { config: p.config });
  },
  round_start(state, p) {
    const seats = mapSeats(state.table.seats, (s) => ({
      ready: false,
      ready_deadline: null,
      in_round: p.positions.includes(s.position),
      hosted: false,
      escaped: false,
      left: false,
      done: false,
      auto: null,
      revealed: null,
    }));
    const next = withTable(state, { round_no: p.round_no, config: p.config, result: null, seats });
    return Object.assign(next, {
      you: freshYou(),
      layout: emptyLayout(spareOf(p.config)),
      compare: freshCompare(),
      deal: null,
      dealing: null,
      suggested: {},
    });
  },
  // A duplicate match's table: its hands are in and wait for the other tables' (games.live.duplicate).
  held(state) {
    const match = state.table.match;
    return match ? withTable(state, { match: Object.assign({}, match, { held: true }) }) : state;
  },
  phase(state, p) {
    const patch = { phase: p.phase, started_at: p.started_at, deadline: p.deadline };
    if (state.table.match && p.phase !== "arranging") {
      patch.match = Object.assign({}, state.table.match, { held: false });
    }
    if ("arrange_deadline" in p) patch.arrange_deadline = p.arrange_deadline;
    if ("duration_ms" in p) patch.duration_ms = p.duration_ms;
    if (p.phase === "settled") {
      patch.seats = mapSeats(state.table.seats, () => ({
        ready: false,
        ready_deadline: p.deadline,
        in_round: false,
      }));
    }
    let next = withTable(state, patch);
    if (PLAY_PHASES.includes(p.phase)) next = Object.assign(next, { dealing: null });
    return next;
  },
  deal(state, p) {
    return Object.assign({}, state, { deal: p });
  },
  hand(state, p) {
    const next = withYou(state, {
      hand: p.cards,
      special: p.special,
      special_unused: Array.isArray(p.special_unused) ? p.special_unused : null,
      suggestions: p.suggestions,
      advice: p.advice || null,
      special_choice: null,
    });
    const start = state.deal ? state.deal.started_at : state.table.started_at;
    return Object.assign(next, {
      layout: initialLayout(p.cards, p.suggestions, spareOf(state.table.config)),
      dealing: { start: start === undefined ? null : start, offsets_ms: p.offsets_ms || [] },
      suggested: {},
    });
  },
  special_chosen(state, p) {
    const patch = { special_choice: p.play_special, auto: p.auto };
    if (p.deadline) patch.deadline = p.deadline;
    return withYou(state, patch);
  },
  submitted(state, p) {
    return withSeat(state, p.position, { done: true, auto: p.auto });
  },
  arrangement(state, p) {
    const arrangement = { front: p.front, middle: p.middle, back: p.back };
    if (Array.isArray(p.unused)) arrangement.unused = p.unused;
    if (p.jokers && typeof p.jokers === "object") arrangement.jokers = p.jokers;
    const next = withYou(state, { arrangement, auto: p.auto });
    return Object.assign(next, { layout: layoutFromYou(next.you, spareOf(state.table.config)) });
  },
  draft_saved(state, p) {
    return withYou(state, { draft: p.draft });
  },
  disconnected(state, p) {
    return withSeat(state, p.position, { connected: false, hosted: p.hosted });
  },
  reconnected(state, p) {
    return withSeat(state, p.position, { connected: true, hosted: false });
  },
  escaped(state, p) {
    return withSeat(state, p.position, { escaped: true });
  },
  leaving(state, p) {
    return withSeat(state, p.position, { left: true });
  },
  settled(state, p) {
    const roundNames = Object.assign({}, state.roundNames);
    (p.result.players || []).forEach((pl) => {
      if (state.names[pl.position]) roundNames[pl.id] = state.names[pl.position];
    });
    const next = withTable(state, { result: p.result });
    return Object.assign(next, {
      roundNames,
      dealing: null,
      compare: Object.assign({}, state.compare, { done: true }),
    });
  },
};
TIMED.forEach((type) => (EVENTS[type] = (state, p) => addTimed(state, type, p)));

// ---- local changes (not from the server) ---------------------------------------------------
export function withLayout(state, layout) {
  return Object.assign({}, state, { layout });
}

export function withNames(state, names) {
  return Object.assign({}, state, { names: Object.assign({}, state.names, names) });
}

export function markClosed(state) {
  return Object.assign({}, state, { closed: true });
}

// Everything of the timeline shown at once (a settlement or a snapshot overtook it).
export function finishTimeline(state) {
  return Object.assign({}, state, { dealing: null, compare: Object.assign({}, state.compare, { done: true }) });
}

// ---- what is visible at a moment -----------------------------------------------------------
// The comparison `elapsedMs` after the comparing phase started: every seat's revealed rows
// ({cards, category, water}), declared specials, the head-to-head `versus` per row, the log
// (structured lines, worded by the view) and the effect playing, if any.
export function compareAt(state, elapsedMs) {
  const compare = state.compare;
  const rows = {};
  Object.keys(compare.rows).forEach((pos) => {
    rows[pos] = {};
    Object.keys(compare.rows[pos]).forEach((r) => (rows[pos][r] = Object.assign({}, compare.rows[pos][r])));
  });
  const specials = Object.assign({}, compare.specials);
  const unused = Object.assign({}, compare.unused || {});
  const versus = {};
  const log = [];
  let effect = null;
  const due = timelineOrder(compare.timeline).filter((e) => compare.done || e.at <= elapsedMs);
  due.forEach((entry) => {
    const p = entry.payload;
    if (entry.type === "reveal") {
      p.hands.forEach((h) => {
        rows[h.position] = rows[h.position] || {};
        const jokers = jokersIn(h.cards, h.jokers);
        rows[h.position][p.row] = { cards: h.cards, category: h.category, water: null, jokers };
        log.push({ kind: "reveal", row: p.row, position: h.position, category: h.category });
      });
    } else if (entry.type === "row_result") {
      versus[p.row] = p.versus || [];
      (p.water || []).forEach((w) => {
        if (rows[w.position] && rows[w.position][p.row]) rows[w.position][p.row].water = w.water;
      });
      log.push({ kind: "row", row: p.row, water: (p.water || []).map((w) => ({ position: w.position, water: w.water })) });
    } else if (entry.type === "gun") {
      log.push({
        kind: "gun",
        shooter: p.shooter,
        target: p.target,
        water: p.water,
        run_over: Boolean(p.run_over),
        home_run: p.kind === "home_run",
      });
    } else if (entry.type === "home_run") {
      log.push({ kind: "home-run", shooter: p.shooter });
    } else if (entry.type === "reveal_special") {
      specials[p.position] = p;
      if (Array.isArray(p.unused)) unused[p.position] = p.unused;
      log.push({ kind: "special", position: p.position, special: p.special, water: p.water });
    } else if (entry.type === "reveal_unused") {
      (p.hands || []).forEach((h) => (unused[h.position] = h.cards));
    }
    const fx = effectOf(entry);
    if (fx && elapsedMs >= fx.from && elapsedMs < fx.until) effect = fx;
  });
  return { rows, specials, unused, versus, log, effect };
}

// The timeline in the order its moments come (ties: in the order the events arrived).
export function timelineOrder(timeline) {
  return timeline.slice().sort((x, y) => x.at - y.at || x.seq - y.seq);
}

// The screen-wide effect an entry plays: a gun or run-over (not the home run's own guns), or
// the home run; null for the others.
export function effectOf(entry) {
  const p = entry.payload;
  if (entry.type === "gun" && p.kind !== "home_run") {
    const ms = p.effect_ms || 1200;
    return {
      type: p.run_over ? "run_over" : "gun",
      shooter: p.shooter,
      target: p.target,
      water: p.water,
      from: entry.at,
      until: entry.at + ms,
      ms,
    };
  }
  if (entry.type === "home_run") {
    const ms = p.effect_ms || 2400;
    return { type: "home_run", shooter: p.shooter, from: entry.at, until: entry.at + ms, ms };
  }
  return null;
}

// My hand's cards that have landed `elapsedMs` after the deal started (all of them when no
// deal is being played).
export function landedAt(state, elapsedMs) {
  const hand = state.you.hand || [];
  if (!state.dealing) return hand.slice();
  const offsets = state.dealing.offsets_ms || [];
  return hand.filter((_card, i) => (offsets[i] || 0) <= elapsedMs);
}

// How many cards the seat at `position` holds `elapsedMs` after the deal started, following
// the deal's pace (RULES.md §8.2); the whole hand (13, or 16 with spare cards) outside the deal.
export function dealtTo(state, position, elapsedMs) {
  const deal = state.deal;
  const size = handSize(state.table.config);
  if (state.table.phase !== "dealing" || !deal) return size;
  const index = deal.order.indexOf(position);
  if (index < 0) return 0;
  const n = deal.order.length;
  let count = 0;
  for (let k = 0; k < size; k++) {
    const offset = deal.mode === "simultaneous" ? k * deal.interval_ms : (k * n + index) * deal.interval_ms;
    if (offset <= elapsedMs) count++;
  }
  return count;
}

// ---- questions about the state -------------------------------------------------------------
export function mySeat(state) {
  return state.table.seats[state.me] || null;
}

export function inRound(state) {
  const seat = mySeat(state);
  return Boolean(seat && seat.in_round && ROUND_PHASES.includes(state.table.phase));
}

export function submitted(state) {
  return Boolean(state.you.arrangement) || state.you.special_choice === true;
}

export function choosing(state) {
  const you = state.you;
  return Boolean(you.special) && you.special_choice === null && state.table.phase === "special_choice";
}

export function canArrange(state) {
  const seat = mySeat(state);
  return (
    !state.closed &&
    PLAY_PHASES.includes(state.table.phase) &&
    Boolean(state.you.hand) &&
    !submitted(state) &&
    !choosing(state) &&
    Boolean(seat && seat.in_round && !seat.escaped)
  );
}

// A seat's hand is "in" once it was played while the player was here (by the player, or by
// the arrange timeout): leaving then is free (docs/protocol.md, "Leaving a round").
export function committed(seat) {
  return Boolean(seat && seat.done && (seat.auto === null || seat.auto === undefined || seat.auto === "timeout"));
}

// Leaving now would be an escape (逃跑) with a penalty.
export function escapeRisk(state) {
  const seat = mySeat(state);
  return !state.closed && inRound(state) && Boolean(seat) && !seat.escaped && !seat.left && !committed(seat);
}

export function penaltyCoins(state) {
  const config = state.table.config || {};
  const base = config.base_score || state.baseScore;
  let multiplier = config.escape_penalty_multiplier;
  if (multiplier === null || multiplier === undefined) multiplier = config.escape_covers_losses ? 10 : 5;
  return base * multiplier;
}

export function specialWater(state, id) {
  const specials = state.table.config && state.table.config.specials;
  return specials && specials[id] ? specials[id].water : null;
}

// My water against the seat at `position` in `row`, head to head, in a compareAt() view; null
// when not compared (yet), when it is my own seat, or when I do not play the round.
export function versusFor(view, me, position, row) {
  const list = (view.versus || {})[row];
  if (!list || position === me) return null;
  for (const pair of list) {
    if (pair.a === me && pair.b === position) return pair.water;
    if (pair.a === position && pair.b === me) return -pair.water;
  }
  return null;
}

export function playedIn(result, playerId) {
  return Boolean(result) && (result.players || []).some((p) => p.id === playerId);
}

// A series' or a duplicate match's table whose last round is played (its last round, else null).
export function lastRoundPlayed(state) {
  const table = state.table;
  const last = table.last_round || (table.match && table.match.last_round);
  return last && table.round_no >= last ? last : null;
}

// The table page's state, as a pure reducer: no DOM, no timers, no globals, no clock.
// `applySnapshot(state, snap)` and `applyEvent(state, event)` return a new state and never
// change the one they are given (what changes is copied). The comparison's and the deal's
// timed events are kept as a timeline; `compareAt(state, elapsedMs)` and
// `landedAt(state, elapsedMs)` say what is visible at a moment, and the page (main.js)
// schedules its renders, effects and sounds at those moments.

export const ROWS = ["front", "middle", "back"];
export const ROW_SIZE = { front: 3, middle: 5, back: 5 };
export const PLAY_PHASES = ["special_choice", "arranging"];
export const ROUND_PHASES = ["dealing", "special_choice", "arranging", "comparing"];
const TIMED = ["reveal", "row_result", "gun", "home_run", "reveal_special"];

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
    deadline: null,
  };
}

export function emptyLayout() {
  return { hand: [], front: [], middle: [], back: [] };
}

// rows[position][row] = {cards, category, water} and specials[position] known from a snapshot;
// the timeline holds the comparison's timed events, due `at` ms after `epoch` (the comparing
// phase's started_at); once `done` (a settlement, a new round) all of it is shown.
export function freshCompare() {
  return { rows: {}, specials: {}, epoch: null, timeline: [], done: false };
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
  };
  const you = snap.you || freshYou();
  const compare = freshCompare();
  snap.seats.forEach((s) => {
    if (!s.revealed) return;
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
        compare.rows[s.position][r] = { cards: s.revealed[r], category, water: null };
      });
    }
  });
  return Object.assign({}, state, {
    table,
    you,
    layout: layoutFromYou(you),
    deal: null,
    dealing: null,
    compare,
  });
}

// The local arrangement from `you`: the submitted rows, or the hand with the saved draft.
export function layoutFromYou(you) {
  const hand = you.hand || [];
  const a = you.arrangement;
  if (a) return { hand: [], front: a.front.slice(), middle: a.middle.slice(), back: a.back.slice() };
  const layout = { hand: hand.slice(), front: [], middle: [], back: [] };
  const draft = you.draft;
  if (!draft || typeof draft !== "object") return layout;
  const left = new Set(hand);
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
  const at = p.offset_ms + (type === "row_result" ? 1 : 0);
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
      layout: emptyLayout(),
      compare: freshCompare(),
      deal: null,
      dealing: null,
    });
  },
  phase(state, p) {
    const patch = { phase: p.phase, started_at: p.started_at, deadline: p.deadline };
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
      suggestions: p.suggestions,
      special_choice: null,
    });
    const start = state.deal ? state.deal.started_at : state.table.started_at;
    return Object.assign(next, {
      layout: { hand: p.cards.slice(), front: [], middle: [], back: [] },
      dealing: { start: start === undefined ? null : start, offsets_ms: p.offsets_ms || [] },
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
    const next = withYou(state, { arrangement: { front: p.front, middle: p.middle, back: p.back }, auto: p.auto });
    return Object.assign(next, {
      layout: { hand: [], front: p.front.slice(), middle: p.middle.slice(), back: p.back.slice() },
    });
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
  const versus = {};
  const log = [];
  let effect = null;
  const due = timelineOrder(compare.timeline).filter((e) => compare.done || e.at <= elapsedMs);
  due.forEach((entry) => {
    const p = entry.payload;
    if (entry.type === "reveal") {
      p.hands.forEach((h) => {
        rows[h.position] = rows[h.position] || {};
        rows[h.position][p.row] = { cards: h.cards, category: h.category, water: null };
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
      log.push({ kind: "special", position: p.position, special: p.special, water: p.water });
    }
    const fx = effectOf(entry);
    if (fx && elapsedMs >= fx.from && elapsedMs < fx.until) effect = fx;
  });
  return { rows, specials, versus, log, effect };
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
// the deal's pace (RULES.md §8.2); 13 outside the deal.
export function dealtTo(state, position, elapsedMs) {
  const deal = state.deal;
  if (state.table.phase !== "dealing" || !deal) return 13;
  const index = deal.order.indexOf(position);
  if (index < 0) return 0;
  const n = deal.order.length;
  let count = 0;
  for (let k = 0; k < 13; k++) {
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

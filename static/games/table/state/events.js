// The server's events applied to the page's state, one family of events at a time: the seats,
// the round, my own hand, and the comparison's timed events (kept on the timeline). An event
// of the wire format {version, type, payload} at or below the state's version changes nothing.

import { emptyLayout, layoutFromYou, openingLayout, spareOf } from "./layout.js";
import { PLAY_PHASES } from "./questions.js";
import { freshCompare, freshYou } from "./snapshot.js";
import { TIMED, withTimed } from "./timeline.js";
import { mapSeats, withSeat, withTable, withYou } from "./updates.js";

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

// Players sitting down, getting ready, dropping and coming back, leaving.
const SEAT_EVENTS = {
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
  // A seat's Ready clock appeared (someone now waits on it) or went (nobody does).
  ready_clock(state, p) {
    return withSeat(state, p.position, { ready_deadline: p.ready_deadline });
  },
  left(state, p) {
    const seats = Object.assign({}, state.table.seats);
    delete seats[p.position];
    let next = withTable(state, { seats });
    if (p.position === state.me) next = Object.assign({}, next, { sentAway: p });
    else {
      const names = Object.assign({}, state.names);
      delete names[p.position];
      // The round on screen (its comparison log, its settlement) still names who played it.
      const goneNames = Object.assign({}, state.goneNames);
      if (state.names[p.position]) goneNames[p.position] = state.names[p.position];
      next = Object.assign({}, next, { names, goneNames });
    }
    return next;
  },
  submitted(state, p) {
    return withSeat(state, p.position, { done: true, auto: p.auto });
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
};

// The table's rules and the round's course: its start, its phases, the deal, the settlement.
const ROUND_EVENTS = {
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
      goneNames: {},
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
      // Each seat's own clock: none for a player nobody waits on (alone with bots).
      const clocks = p.ready_deadlines || {};
      patch.seats = mapSeats(state.table.seats, (s) => ({
        ready: false,
        ready_deadline: String(s.position) in clocks ? clocks[String(s.position)] : p.deadline,
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

// My own hand: dealt, the special hand answered, arranged (submitted or a saved draft).
const HAND_EVENTS = {
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
      layout: openingLayout(p.cards, p.suggestions, spareOf(state.table.config), state.opening),
      dealing: { start: start === undefined ? null : start, offsets_ms: p.offsets_ms || [] },
      suggested: {},
    });
  },
  special_chosen(state, p) {
    const patch = { special_choice: p.play_special, auto: p.auto };
    if (p.deadline) patch.deadline = p.deadline;
    return withYou(state, patch);
  },
  arrangement(state, p) {
    const arrangement = { front: p.front, middle: p.middle, back: p.back };
    if (Array.isArray(p.unused)) arrangement.unused = p.unused;
    if (p.jokers && typeof p.jokers === "object") arrangement.jokers = p.jokers;
    const next = withYou(state, { arrangement, auto: p.auto });
    return Object.assign(next, { layout: layoutFromYou(next.you, spareOf(state.table.config), state.opening) });
  },
  draft_saved(state, p) {
    return withYou(state, { draft: p.draft });
  },
};

// The comparison's timed events: each goes on the timeline, shown at its moment.
const TIMED_EVENTS = {};
TIMED.forEach((type) => (TIMED_EVENTS[type] = (state, p) => withTimed(state, type, p)));

const EVENTS = Object.assign({}, SEAT_EVENTS, ROUND_EVENTS, HAND_EVENTS, TIMED_EVENTS);

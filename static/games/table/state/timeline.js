// The round's timed events as a timeline, and what is visible at a moment of it. The
// comparison's events (reveals, row results, guns, home run, specials, set-aside cards) and my
// hand's deal carry offsets in ms; `compareAt(state, elapsedMs)`, `landedAt(state, elapsedMs)`
// and `dealtTo(state, position, elapsedMs)` say what shows then, and the page schedules its
// renders, effects and sounds at those moments.

import { handSize, jokersIn } from "./layout.js";

// The comparison's events kept on the timeline (the others change the state at once).
export const TIMED = ["reveal", "row_result", "gun", "home_run", "reveal_special", "reveal_unused"];

// The state with a timed event of the comparison added to its timeline.
export function withTimed(state, type, p) {
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

// Questions the views and the page ask about the state: where I sit, whether I may arrange,
// what leaving would cost, my water against a seat, whether a series or a match is over.

export const PLAY_PHASES = ["special_choice", "arranging"];
export const ROUND_PHASES = ["dealing", "special_choice", "arranging", "comparing"];

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

// Small immutable updates of the page's state: each returns a new state and copies only what
// changes. The reducer's events use the first four; the page makes the others itself (not from
// the server): its own arrangement, the names it looked up, the end of the page, and a
// comparison shown whole.

export function withTable(state, patch) {
  return Object.assign({}, state, { table: Object.assign({}, state.table, patch) });
}

export function withSeat(state, position, patch) {
  const seat = state.table.seats[position];
  if (!seat) return state;
  const seats = Object.assign({}, state.table.seats, { [position]: Object.assign({}, seat, patch) });
  return withTable(state, { seats });
}

export function withYou(state, patch) {
  return Object.assign({}, state, { you: Object.assign({}, state.you, patch) });
}

// Every seat with `patch(seat)` applied.
export function mapSeats(seats, patch) {
  const out = {};
  Object.keys(seats).forEach((p) => (out[p] = Object.assign({}, seats[p], patch(seats[p]))));
  return out;
}

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

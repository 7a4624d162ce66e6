// The table page's state, as a pure reducer: no DOM, no timers, no globals, no clock.
// `applySnapshot(state, snap)` and `applyEvent(state, event)` return a new state and never
// change the one they are given (what changes is copied). The comparison's and the deal's
// timed events are kept as a timeline; `compareAt(state, elapsedMs)` and
// `landedAt(state, elapsedMs)` say what is visible at a moment, and the page (main.js)
// schedules its renders, effects and sounds at those moments.
//
// This module is the reducer's entry point, for the page, its views and the replay; its parts
// are in state/: the fresh state and the snapshot, the events, the timeline, the layout and
// the suggestions (variant decks included: docs/protocol.md "Variant decks", RULES.md §12), the
// small updates, and the questions asked of a state.

export { applySnapshot, freshCompare, freshTable, freshYou, initialState } from "./state/snapshot.js";
export { applyEvent, applyEvents } from "./state/events.js";
export { compareAt, dealtTo, effectOf, landedAt, timelineOrder } from "./state/timeline.js";
export {
  HAND_SIZE,
  ROWS,
  ROW_SIZE,
  applySuggestion,
  cardsKey,
  copyLayout,
  emptyLayout,
  handSize,
  initialLayout,
  initialTray,
  jokersIn,
  keptCards,
  layoutFromYou,
  openingLayout,
  readyToSubmit,
  rowJokers,
  spareOf,
  submitFields,
  swapCards,
} from "./state/layout.js";
export {
  HAND_TYPES,
  SORTS,
  autoFilled,
  fiveOfAKindIn,
  handTypeGroups,
  handTypesFor,
  nextGroup,
  nextSort,
  rowDisplayOrder,
  sortByCount,
  sortByRank,
  sortBySuit,
  sortCards,
} from "./state/handtypes.js";
export { dealSuggestionsPending, shownSuggestions, withHandSuggestions, withSuggested } from "./state/suggestions.js";
export { finishTimeline, markClosed, withLayout, withNames } from "./state/updates.js";
export {
  PLAY_PHASES,
  ROUND_PHASES,
  canArrange,
  choosing,
  committed,
  escapeRisk,
  inRound,
  lastRoundPlayed,
  mySeat,
  penaltyCoins,
  playedIn,
  specialWater,
  submitted,
  versusFor,
} from "./state/questions.js";

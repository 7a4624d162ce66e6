// The suggested arrangements that fit the cards kept: the deal's (with the hand, or a moment
// after it in a `hand_suggestions` message) and, with spare cards, the `suggest` replies for
// other sets of 13 kept cards (docs/protocol.md).

import { HAND_SIZE, cardsKey, cardsOf, keptCards, openingLayout, sameSet, spareOf } from "./layout.js";
import { withYou } from "./updates.js";

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
// the hand): kept when they are for the hand held. A layout still as the hand came (nothing
// moved) becomes what a hand that came with them would have opened as: with spare cards, the
// best one's cards set aside; with the default layout, the best one laid out in the rows.
export function withHandSuggestions(state, message) {
  const hand = state.you.hand;
  if (!hand || !message || !Array.isArray(message.suggestions) || !sameSet(message.cards, hand)) return state;
  const next = withYou(state, { suggestions: message.suggestions });
  const spare = spareOf(state.table.config);
  const untouched = JSON.stringify(openingLayout(hand, state.you.suggestions, spare, state.opening));
  if ((spare || state.opening === "suggested") && JSON.stringify(state.layout) === untouched) {
    next.layout = openingLayout(hand, message.suggestions, spare, state.opening);
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

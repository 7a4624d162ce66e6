// The player's arrangement on the page: the zones of the layout (the hand area, the three
// rows and, with spare cards, the tray), built from a dealt hand, a suggestion or a saved
// draft, and what a submit sends. Pure functions of plain data.
//
// Variant decks (docs/protocol.md "Variant decks", RULES.md §12): with spare cards the hand
// holds 13 + spare_cards cards and the layout has a `tray` of the ones set aside (swapped with
// the 13 by the player, never placed in a row); jokers in a full row carry what they stand
// for (`jokers`).

import { sortByRank } from "./cardorder.js";

export const ROWS = ["front", "middle", "back"];
export const ROW_SIZE = { front: 3, middle: 5, back: 5 };
export const HAND_SIZE = 13;

export function spareOf(config) {
  const n = config && config.spare_cards;
  return Number.isInteger(n) && n > 0 ? n : 0;
}

// How many cards each player is dealt: 13, or 16 with spare cards.
export function handSize(config) {
  return HAND_SIZE + spareOf(config);
}

// The zones of the layout: `tray` only with spare cards (the cards set aside).
export function emptyLayout(spare) {
  const layout = { hand: [], front: [], middle: [], back: [] };
  if (spare) layout.tray = [];
  return layout;
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

// Whether `a` and `b` are arrays of the same cards.
export function sameSet(a, b) {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && cardsKey(a) === cardsKey(b);
}

// `cards` when they are `n` distinct cards of `hand`, else null.
export function cardsOf(cards, hand, n) {
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

// How a fresh hand opens on the table page (its #table-config `opening`, the player's setting,
// RULES.md §6): "suggested" — laid out in the rows as the first suggestion (the hand area sorted
// by rank while the suggestions are on their way); "sorted" — every card in the hand area,
// sorted by rank; anything else (the replay, the reducer's tests) — as dealt (initialLayout).
export function openingLayout(hand, suggestions, spare, opening) {
  const layout = initialLayout(hand, suggestions, spare);
  if (opening !== "suggested" && opening !== "sorted") return layout;
  const first = Array.isArray(suggestions) && suggestions.length ? suggestions[0] : null;
  if (opening === "suggested" && first) {
    const laid = applySuggestion(layout, first, hand, spare);
    laid.hand = sortByRank(laid.hand);
    return laid;
  }
  layout.hand = sortByRank(layout.hand);
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
// tray too, with spare cards); with neither, the hand as it opens (`opening`, openingLayout).
export function layoutFromYou(you, spare, opening) {
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
  if (!draft || typeof draft !== "object") return openingLayout(hand, you.suggestions, spare, opening);
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

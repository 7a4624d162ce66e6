// The hand's cards in order (RULES.md §1, §6): by rank, by suit or by count, and a full row's
// display order (straights low to high). Pure functions of card names ("AS", "7D2", "RJ").

export const RANKS = "23456789TJQKA";
export const SUITS = "SHCD"; // display order ♠ ♥ ♣ ♦ (RULES.md §1)
export const ACE = 14;

export function isJoker(card) {
  return card === "RJ" || card === "BJ";
}

// 2..14; 0 for a joker.
export function rankOf(card) {
  return isJoker(card) ? 0 : RANKS.indexOf(card[0]) + 2;
}

// "S", "H", "C" or "D" (a copy is a diamond); null for a joker.
export function suitOf(card) {
  return isJoker(card) ? null : card[1];
}

function copyOf(card) {
  return isJoker(card) ? 0 : card.length > 2 ? Number(card.slice(2)) : 1;
}

function jokerOrder(card) {
  return card === "RJ" ? 0 : 1;
}

export function compareKeys(x, y) {
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

function sortedBy(cards, key) {
  return cards.slice().sort((a, b) => compareKeys(key(a), key(b)));
}

// ---- sorting the hand -------------------------------------------------------------------------

export const SORTS = ["rank", "suit", "count"];

// By rank, high to low (then suit ♠ ♥ ♣ ♦, a copy after its diamond); the jokers first (red,
// then black): they are the strongest cards.
export function sortByRank(cards) {
  return sortedBy(cards, (c) =>
    isJoker(c) ? [0, jokerOrder(c), 0, 0] : [1, -rankOf(c), SUITS.indexOf(suitOf(c)), copyOf(c)],
  );
}

// By suit (♠ ♥ ♣ ♦), each suit high to low; the jokers first.
export function sortBySuit(cards) {
  return sortedBy(cards, (c) =>
    isJoker(c) ? [0, jokerOrder(c), 0, 0] : [1, SUITS.indexOf(suitOf(c)), -rankOf(c), copyOf(c)],
  );
}

// By count, groups first: the ranks held most often first (quads, trips, pairs, singles), each
// count high to low; the jokers first.
export function sortByCount(cards) {
  const counts = {};
  cards.forEach((c) => (counts[rankOf(c)] = (counts[rankOf(c)] || 0) + 1));
  return sortedBy(cards, (c) =>
    isJoker(c)
      ? [0, jokerOrder(c), 0, 0, 0]
      : [1, -counts[rankOf(c)], -rankOf(c), SUITS.indexOf(suitOf(c)), copyOf(c)],
  );
}

export function sortCards(cards, order) {
  if (order === "suit") return sortBySuit(cards);
  if (order === "count") return sortByCount(cards);
  return sortByRank(cards);
}

// The order after `order` in the cycle rank → suit → count → rank.
export function nextSort(order) {
  return SORTS[(SORTS.indexOf(order) + 1) % SORTS.length];
}

// A full row as it is shown: a straight (or straight flush) low to high — 23456, A2345 with
// the ace first —, any other hand groups first (sortByCount). `hand`: the row's evaluation
// ({category, jokers: {"RJ": "9S"}}, cards.js evaluate), which says what each joker stands for.
export function rowDisplayOrder(cards, hand) {
  if (!hand || (hand.category !== "straight" && hand.category !== "straight_flush")) {
    return sortByCount(cards);
  }
  const jokers = hand.jokers || {};
  const value = (c) => (isJoker(c) ? rankOf(jokers[c] || "A") : rankOf(c));
  const values = cards.map(value);
  const wheel = values.includes(ACE) && values.includes(2);
  const low = (c) => (wheel && value(c) === ACE ? 1 : value(c));
  return sortedBy(cards, (c) => [low(c), isJoker(c) ? 1 : 0]);
}


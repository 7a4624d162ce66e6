// Arranging like the apps (RULES.md §6): the groups behind the hand-type buttons (对子 … 同花顺,
// 五同) and the last row filled by itself; with the hand's sort orders of cardorder.js. Pure
// functions of card names and layouts; no DOM, no window.
//
// Card names are the engine's: rank then suit ("AS", "TD"), a diamond's copy with its number
// ("7D2", a diamond for every rule, RULES.md §12.1), the jokers "RJ" and "BJ" (wild, §12.2).

import { ROWS, ROW_SIZE } from "./layout.js";
import { ACE, SUITS, compareKeys, isJoker, rankOf, sortByRank, suitOf } from "./cardorder.js";

export { SORTS, nextSort, rowDisplayOrder, sortByCount, sortByRank, sortBySuit, sortCards } from "./cardorder.js";

export const HAND_TYPES = [
  "pair",
  "two_pair",
  "trips",
  "straight",
  "flush",
  "full_house",
  "quads",
  "straight_flush",
  "five_of_a_kind",
];

// ---- the groups behind the hand-type buttons --------------------------------------------------

// The cards by rank (each rank's in screen order) and by suit (each suit's by rank, high to
// low), and the jokers (red first).
function indexCards(cards) {
  const sorted = sortByRank(cards);
  const byRank = {};
  const bySuit = { S: [], H: [], C: [], D: [] };
  const jokers = [];
  sorted.forEach((c) => {
    if (isJoker(c)) {
      jokers.push(c);
      return;
    }
    (byRank[rankOf(c)] = byRank[rankOf(c)] || []).push(c);
    bySuit[suitOf(c)].push(c);
  });
  return { byRank, bySuit, jokers };
}

function held(index, rank) {
  return index.byRank[rank] || [];
}

// `n` of a rank: its own cards first, jokers for the rest. Null unless at least one card of the
// rank is held and the jokers cover the rest (a group never is all jokers).
function ofAKind(index, rank, n, jokersLeft) {
  const own = held(index, rank).slice(0, n);
  const need = n - own.length;
  if (!own.length || need > jokersLeft) return null;
  return { cards: own, jokers: need };
}

// Straight windows, strongest first: [strength, ranks low to high]; the wheel (A2345) is the
// lowest straight, or just below TJQKA with a2345 "second" (RULES.md §3.1).
function straightWindows(a2345) {
  const out = [];
  for (let top = ACE; top >= 6; top--) out.push([2 * top, [top - 4, top - 3, top - 2, top - 1, top]]);
  const wheel = [a2345 === "second" ? 27 : 10, [ACE, 2, 3, 4, 5]];
  if (a2345 === "second") out.splice(1, 0, wheel);
  else out.push(wheel);
  return out;
}

// Every combination of k items of `items` (in order).
function combinations(items, k) {
  const out = [];
  const go = (from, acc) => {
    if (acc.length === k) {
      out.push(acc);
      return;
    }
    for (let i = from; i <= items.length - (k - acc.length); i++) go(i + 1, acc.concat([items[i]]));
  };
  go(0, []);
  return out;
}

// The candidates of one hand type: {cards (naturals), jokers (how many), strength (an array,
// compared high first), suit (index, for a stable order)}.
function candidates(type, index, options) {
  const J = index.jokers.length;
  const ranks = [];
  for (let r = ACE; r >= 2; r--) ranks.push(r);
  const out = [];
  const sizes = { pair: 2, trips: 3, quads: 4, five_of_a_kind: 5 };
  if (sizes[type]) {
    ranks.forEach((r) => {
      const g = ofAKind(index, r, sizes[type], J);
      if (g) out.push({ cards: g.cards, jokers: g.jokers, strength: [r], suit: 0 });
    });
  } else if (type === "two_pair" || type === "full_house") {
    const [first, second] = type === "two_pair" ? [2, 2] : [3, 2];
    ranks.forEach((a) =>
      ranks.forEach((b) => {
        if (a === b || (type === "two_pair" && b > a)) return;
        const x = ofAKind(index, a, first, J);
        const y = x && ofAKind(index, b, second, J - x.jokers);
        // Jokers in the trips and a higher pair: the same cards are the higher trips (the
        // jokers play as that rank), found as that full house.
        if (type === "full_house" && x && x.jokers && b > a) return;
        if (x && y) {
          out.push({ cards: x.cards.concat(y.cards), jokers: x.jokers + y.jokers, strength: [a, b], suit: 0 });
        }
      }),
    );
  } else if (type === "straight" || type === "straight_flush") {
    const suits = type === "straight" ? [null] : SUITS.split("");
    const windows = straightWindows(options.a2345);
    windows.forEach(([strength, window]) =>
      suits.forEach((suit, s) => {
        const own = [];
        window.forEach((r) => {
          const card = held(index, r).find((c) => suit === null || suitOf(c) === suit);
          if (card) own.push(card);
        });
        const need = 5 - own.length;
        if (!own.length || need > J) return;
        // Jokers that would rather make a higher straight of the same cards (5678 and a
        // joker is 9-high, not 8-high): that straight is the group, listed once.
        const best = windows.find(([, w]) => own.every((c) => w.includes(rankOf(c))));
        if (best[0] === strength) out.push({ cards: own, jokers: need, strength: [strength], suit: s });
      }),
    );
  } else if (type === "flush") {
    SUITS.split("").forEach((suit, s) => {
      const mine = index.bySuit[suit];
      const seen = new Set();
      for (let k = Math.min(5, mine.length); k >= Math.max(1, 5 - J); k--) {
        combinations(mine, k).forEach((own) => {
          const key = own.map(rankOf).join(",");
          if (seen.has(key + "/" + k)) return; // the same ranks with another copy of a diamond
          seen.add(key + "/" + k);
          // A joker in a flush is at best an ace of its suit.
          const strength = own.map(rankOf).concat(new Array(5 - k).fill(ACE)).sort((a, b) => b - a);
          out.push({ cards: own, jokers: 5 - k, strength, suit: s });
        });
      }
    });
  }
  return out;
}

// The groups of one hand type among `cards` (the cards not yet placed), strongest first: on
// equal strength the one with fewer jokers first, then by suit (♠ ♥ ♣ ♦). Each group is the
// cards that make the type (2 for a pair, 4 for two pair and quads, 3 for trips, 5 for the
// others), as an array of card names. One group per distinct group: a pair per rank held
// (trips and quads give their pair too), two pair per two ranks, a full house per trip rank and
// pair rank, a straight per top card, a straight flush per top card and suit, a flush per suit
// and ranks. Jokers (wild, RULES.md §12.2) complete a group — the fewest that do — but a group
// is never only jokers, nor is a rank part of one (the pair of a full house, say) only jokers.
// options: {a2345: "lowest"|"second", fiveOfAKind: bool (decks with extra suits or jokers)}.
export function handTypeGroups(cards, type, options) {
  const opts = options || {};
  if (type === "five_of_a_kind" && !opts.fiveOfAKind) return [];
  if (!HAND_TYPES.includes(type)) return [];
  const index = indexCards(cards);
  const found = candidates(type, index, opts);
  found.sort((x, y) => compareKeys(y.strength, x.strength) || x.jokers - y.jokers || x.suit - y.suit);
  const groups = [];
  const seen = new Set();
  found.forEach((g) => {
    const group = g.cards.concat(index.jokers.slice(0, g.jokers));
    const key = group.slice().sort().join(" ");
    if (seen.has(key)) return; // the same cards as a stronger reading (a joker's straight)
    seen.add(key);
    groups.push(group);
  });
  return groups;
}

// The hand types shown as buttons: five of a kind only with the decks that have it.
export function handTypesFor(config) {
  return HAND_TYPES.filter((t) => t !== "five_of_a_kind" || fiveOfAKindIn(config));
}

// Whether a configuration's deck can make five of a kind (RULES.md §12.3).
export function fiveOfAKindIn(config) {
  return Boolean(config && ((config.extra_suits || 0) > 0 || (config.jokers || 0) > 0));
}

// The group a hand-type button selects: the one after `selected` when it is one of `groups`
// (pressing again cycles, back to the first after the last), else the first. Null: none.
export function nextGroup(groups, selected) {
  if (!groups.length) return null;
  const key = (cards) => cards.slice().sort().join(" ");
  const current = key(selected || []);
  const i = groups.findIndex((g) => key(g) === current);
  return groups[(i + 1) % groups.length].slice();
}

// ---- the last row filled by itself --------------------------------------------------------------

// When two rows are full, the cards left in the hand area go to the third row (they are
// exactly as many as it has room for): the layout with them placed, else null. The tray (spare
// cards, set aside) never moves.
export function autoFilled(layout) {
  const open = ROWS.filter((r) => layout[r].length < ROW_SIZE[r]);
  if (open.length !== 1 || !layout.hand.length) return null;
  const row = open[0];
  if (layout[row].length + layout.hand.length !== ROW_SIZE[row]) return null;
  const next = Object.assign({}, layout, { hand: [] });
  next[row] = layout[row].concat(layout.hand);
  return next;
}

// Cards for the table page: drawing them (our own CSS cards, no card art) and the row-hand
// ranking used by the live foul check. The ranking is a port of games/rules/hands.py and must
// agree with it bit for bit: the server decides, this only warns early (RULES.md §3, §4).
//
// Card names are the engine's (games/rules/cards.py): rank then suit ("AS", "TD"); a copy of
// a diamond from the variant decks carries its copy number ("7D2", "7D3": a diamond for every
// rule, RULES.md §12.1); the jokers are "RJ" (大王, red) and "BJ" (小王, black), wild (§12.2).
(function () {
  "use strict";

  const RANKS = "23456789TJQKA";
  const SUITS = "SHCD"; // display order ♠ ♥ ♣ ♦ (RULES.md §1)
  const SUIT_SYMBOL = { S: "♠", H: "♥", C: "♣", D: "♦" };
  const CATEGORY = {
    high_card: 0,
    pair: 1,
    two_pair: 2,
    trips: 3,
    straight: 4,
    flush: 5,
    full_house: 6,
    quads: 7,
    straight_flush: 8,
    five_of_a_kind: 9, // variant decks only (RULES.md §12.3)
  };
  const CATEGORY_IDS = Object.keys(CATEGORY);
  const B = 32;
  const WHEEL_STRENGTH = { lowest: 10, second: 27 };
  const RED_JOKER = "RJ";
  const BLACK_JOKER = "BJ";

  const gettext = (text) => (window.gettext ? window.gettext(text) : text);
  const interpolate = (text, params) =>
    window.interpolate
      ? window.interpolate(text, params, true)
      : text.replace(/%\((\w+)\)s/g, (_, k) => String(params[k]));

  function isJoker(card) {
    return card === RED_JOKER || card === BLACK_JOKER;
  }

  // 2..14 (ace high); 0 for a joker, which has no rank of its own (hands._RANK).
  function rankOf(card) {
    return isJoker(card) ? 0 : RANKS.indexOf(card[0]) + 2;
  }

  // "S", "H", "C" or "D" (a copy is a diamond); null for a joker.
  function suitOf(card) {
    return isJoker(card) ? null : card[1];
  }

  // Card.copy: 1 for a standard card, 2 or 3 for the extra diamonds, 0 for a joker.
  function copyOf(card) {
    if (isJoker(card)) return 0;
    return card.length > 2 ? Number(card.slice(2)) : 1;
  }

  function isRed(card) {
    if (isJoker(card)) return card === RED_JOKER;
    return card[1] === "H" || card[1] === "D";
  }

  function rankLabel(card) {
    return card[0] === "T" ? "10" : card[0];
  }

  // "A♠" for "AS" (a copy's mark is drawn apart).
  function shortLabel(card) {
    return rankLabel(card) + SUIT_SYMBOL[card[1]];
  }

  function pack(category, digits, width) {
    let value = category;
    for (let i = 0; i < width; i++) value = value * B + (i < digits.length ? digits[i] : 0);
    return value;
  }

  // hands._evaluate: a row given as ranks (repeats allowed: copies, joker values). Counting in
  // an array keeps it quick enough to run for every joker value (evaluateWild).
  const COUNTS = new Array(15).fill(0);

  function evaluateRanks(ranks, flush, a2345) {
    const n = ranks.length;
    for (let i = 0; i < n; i++) COUNTS[ranks[i]]++;
    // digits: the ranks ordered by (count, rank) descending, duplicates kept; shape: the counts.
    let digits = [];
    const shape = [];
    for (let c = 5; c >= 1; c--) {
      for (let r = 14; r >= 2; r--) {
        if (COUNTS[r] !== c) continue;
        shape.push(c);
        for (let k = 0; k < c; k++) digits.push(r);
      }
    }
    for (let i = 0; i < n; i++) COUNTS[ranks[i]] = 0;
    let cat;
    if (n === 3) {
      cat = shape[0] === 3 ? CATEGORY.trips : shape[0] === 2 ? CATEGORY.pair : CATEGORY.high_card;
      const key = pack(cat, digits, 3);
      return { size: 3, category: CATEGORY_IDS[cat], digits, key, cross: key, jokers: {} };
    }
    let strength = 0;
    if (shape[0] === 1) {
      if (digits[0] - digits[4] === 4) strength = 2 * digits[0];
      else if (digits[0] === 14 && digits[1] === 5) strength = WHEEL_STRENGTH[a2345 || "lowest"];
    }
    if (shape[0] === 5) cat = CATEGORY.five_of_a_kind;
    else if (strength) {
      cat = flush ? CATEGORY.straight_flush : CATEGORY.straight;
      digits = [strength];
    } else if (shape[0] === 4) cat = CATEGORY.quads;
    else if (shape[0] === 3 && shape[1] === 2) cat = CATEGORY.full_house;
    else if (flush) {
      cat = CATEGORY.flush;
      digits = ranks.slice().sort((a, b) => b - a); // card by card, repeats included (§12.3)
    } else if (shape[0] === 3) cat = CATEGORY.trips;
    else if (shape[0] === 2) cat = shape[1] === 2 ? CATEGORY.two_pair : CATEGORY.pair;
    else cat = CATEGORY.high_card;
    const frontLike = cat === CATEGORY.high_card || cat === CATEGORY.pair || cat === CATEGORY.trips;
    return {
      size: 5,
      category: CATEGORY_IDS[cat],
      digits,
      key: pack(cat, digits, 5),
      cross: pack(cat, frontLike ? digits : [], 3),
      jokers: {},
    };
  }

  // Joker values in the engine's order (itertools.combinations_with_replacement over ranks
  // high to low): (A), (K) … for one joker; (A,A), (A,K) … (A,2), (K,K) … for two.
  function jokerValues(count) {
    const out = [];
    const go = (from, acc) => {
      if (acc.length === count) {
        out.push(acc);
        return;
      }
      for (let r = from; r >= 2; r--) go(r, acc.concat([r]));
    };
    go(14, []);
    return out;
  }
  const JOKER_VALUES = [[[]], jokerValues(1), jokerValues(2)];

  // hands._evaluate_wild: the strongest completion of a row holding jokers (RULES.md §12.2).
  // Every value is tried (at most 91 for two jokers, a few hundred microseconds), so the
  // answer, including which of several equally strong values is reported (the first, i.e. the
  // highest), is the engine's. The jokers take the suit of the other cards when those share
  // one (a flush is the only way a suit can help), else spades.
  function evaluateWild(cards, a2345) {
    // The red joker first (as the engine): it takes the higher of two values, whatever the
    // order the row's cards were placed in.
    const jokers = cards.filter(isJoker);
    if (jokers.length === 2 && jokers[1] === RED_JOKER) jokers.reverse();
    const naturals = cards.filter((c) => !isJoker(c));
    const ranks = naturals.map(rankOf);
    const suits = new Set(naturals.map(suitOf));
    const suit = suits.size === 1 ? naturals[0][1] : "S";
    const flush = suits.size <= 1;
    const combos = JOKER_VALUES[jokers.length] || jokerValues(jokers.length);
    let best = null;
    let bestValues = null;
    for (const values of combos) {
      const hand = evaluateRanks(ranks.concat(values), flush, a2345);
      if (best === null || hand.key > best.key) {
        best = hand;
        bestValues = values;
      }
    }
    const stands = {};
    jokers.forEach((joker, i) => (stands[joker] = RANKS[bestValues[i] - 2] + suit));
    best.jokers = stands;
    return best;
  }

  // hands.evaluate: {size, category (id), digits, key, cross, jokers ({"RJ": "AS"}, or {})}.
  function evaluate(cards, a2345) {
    const n = cards.length;
    if (n !== 3 && n !== 5) throw new Error("a row has 3 or 5 cards");
    if (cards.some(isJoker)) return evaluateWild(cards, a2345);
    const flush = n === 5 && new Set(cards.map(suitOf)).size === 1;
    return evaluateRanks(cards.map(rankOf), flush, a2345);
  }

  // RowHand.compare: same-size rows by key, a 3-card row against a 5-card row by §3.3.
  function compareHands(a, b) {
    const x = a.size === b.size ? a.key : a.cross;
    const y = a.size === b.size ? b.key : b.cross;
    return (x > y) - (x < y);
  }

  // hands.foul_rows, over the rows that are full: the rows breaking back >= middle >= front.
  function foulRows(rows, a2345) {
    const full = {
      front: rows.front.length === 3 ? evaluate(rows.front, a2345) : null,
      middle: rows.middle.length === 5 ? evaluate(rows.middle, a2345) : null,
      back: rows.back.length === 5 ? evaluate(rows.back, a2345) : null,
    };
    const bad = new Set();
    if (full.middle && full.back && compareHands(full.middle, full.back) > 0) {
      bad.add("middle");
      bad.add("back");
    }
    if (full.front && full.middle && compareHands(full.front, full.middle) > 0) {
      bad.add("front");
      bad.add("middle");
    }
    return { rows: ["front", "middle", "back"].filter((r) => bad.has(r)), hands: full };
  }

  // Screen order (cards.sort_key): jokers first, red then black (they are the strongest);
  // then by rank or by suit; a copy right after its diamond.
  function screenOrder(bySuit) {
    const key = (card) => {
      if (isJoker(card)) return [0, card === RED_JOKER ? 0 : 1, 0, 0];
      const rank = -rankOf(card);
      const suit = SUITS.indexOf(suitOf(card));
      return bySuit ? [1, suit, rank, copyOf(card)] : [1, rank, suit, copyOf(card)];
    };
    return (a, b) => {
      const x = key(a);
      const y = key(b);
      for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i] - y[i];
      return 0;
    };
  }

  function sortByRank(cards) {
    return cards.slice().sort(screenOrder(false));
  }

  function sortBySuit(cards) {
    return cards.slice().sort(screenOrder(true));
  }

  function span(className, text) {
    const node = document.createElement("span");
    node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A joker: 大王 (red) / 小王 (black), "JOKER" down the side and a star; options.stands (a
  // standard card like "AS") adds what it stands for in its row as a small "=A♠" tag, in the
  // star's place.
  function jokerElement(card, el, options) {
    el.classList.add("joker");
    const label = card === RED_JOKER ? gettext("Red joker 大王") : gettext("Black joker 小王");
    const corner = span("corner");
    corner.append(span("rank", card === RED_JOKER ? "大" : "小"), span("suit", "王"));
    el.append(corner, span("joker-word", "JOKER"));
    const stands = options && options.stands;
    if (typeof stands === "string" && /^[2-9TJQKA][SHCD]$/.test(stands)) {
      // Before the star, which the stylesheet then hides (`.stands ~ .pip`): the face is the
      // children alone, so a caller may swap them in place.
      const tag = span("stands " + (isRed(stands) ? "red" : "black"), "=" + shortLabel(stands));
      tag.setAttribute("aria-hidden", "true");
      el.append(tag);
      el.dataset.stands = stands;
      el.setAttribute(
        "aria-label",
        interpolate(gettext("%(joker)s as %(card)s"), { joker: label, card: shortLabel(stands) }),
      );
    } else {
      el.setAttribute("aria-label", label);
    }
    el.append(span("pip", "★"));
    return el;
  }

  // One card element: rank and suit in a corner, the suit large in the middle; a copy of a
  // diamond (§12.1) adds a small copy number badge.
  function cardElement(card, options) {
    const el = document.createElement("div");
    el.className = "card " + (isRed(card) ? "red" : "black");
    if (options && options.small) el.classList.add("small");
    el.dataset.card = card;
    el.setAttribute("role", "img");
    if (isJoker(card)) return jokerElement(card, el, options);
    const corner = span("corner");
    corner.append(span("rank", rankLabel(card)), span("suit", SUIT_SYMBOL[suitOf(card)]));
    el.append(corner, span("pip", SUIT_SYMBOL[suitOf(card)]));
    const copy = copyOf(card);
    if (copy > 1) {
      // Beside the rank, so it shows in a fan of overlapping cards too.
      const badge = document.createElement("sup");
      badge.className = "copy";
      badge.textContent = String(copy);
      badge.setAttribute("aria-hidden", "true");
      corner.append(badge);
      el.setAttribute(
        "aria-label",
        interpolate(gettext("%(card)s (copy %(n)s, 第%(n)s张)"), { card: shortLabel(card), n: copy }),
      );
    } else {
      el.setAttribute("aria-label", shortLabel(card));
    }
    return el;
  }

  function cardBack(options) {
    const el = document.createElement("div");
    el.className = "card back" + (options && options.small ? " small" : "");
    el.setAttribute("aria-hidden", "true");
    return el;
  }

  window.ShisanshuiCards = {
    RANKS,
    SUITS,
    SUIT_SYMBOL,
    CATEGORY_IDS,
    rankOf,
    suitOf,
    copyOf,
    isRed,
    isJoker,
    evaluate,
    compareHands,
    foulRows,
    sortByRank,
    sortBySuit,
    cardElement,
    cardBack,
  };
})();

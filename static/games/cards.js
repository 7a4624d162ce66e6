// Cards for the table page: drawing them (our own CSS cards, no card art) and the row-hand
// ranking used by the live foul check. The ranking is a port of games/rules/hands.py and must
// agree with it bit for bit: the server decides, this only warns early (RULES.md §3, §4).
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
  };
  const CATEGORY_IDS = Object.keys(CATEGORY);
  const B = 32;
  const WHEEL_STRENGTH = { lowest: 10, second: 27 };

  function rankOf(card) {
    return RANKS.indexOf(card[0]) + 2;
  }

  function suitOf(card) {
    return card[1];
  }

  function isRed(card) {
    return card[1] === "H" || card[1] === "D";
  }

  function rankLabel(card) {
    return card[0] === "T" ? "10" : card[0];
  }

  function pack(category, digits, width) {
    let value = category;
    for (let i = 0; i < width; i++) value = value * B + (i < digits.length ? digits[i] : 0);
    return value;
  }

  // hands.evaluate: {size, category (id), digits, key, cross}.
  function evaluate(cards, a2345) {
    const n = cards.length;
    if (n !== 3 && n !== 5) throw new Error("a row has 3 or 5 cards");
    const ranks = cards.map(rankOf);
    const counts = {};
    ranks.forEach((r) => (counts[r] = (counts[r] || 0) + 1));
    let digits = ranks.slice().sort((a, b) => counts[b] - counts[a] || b - a);
    const shape = Object.values(counts).sort((a, b) => b - a);
    let cat;
    if (n === 3) {
      cat = shape[0] === 3 ? CATEGORY.trips : shape[0] === 2 ? CATEGORY.pair : CATEGORY.high_card;
      const key = pack(cat, digits, 3);
      return { size: 3, category: CATEGORY_IDS[cat], digits, key, cross: key };
    }
    const flush = new Set(cards.map(suitOf)).size === 1;
    let strength = 0;
    if (shape[0] === 1) {
      if (digits[0] - digits[4] === 4) strength = 2 * digits[0];
      else if (digits[0] === 14 && digits[1] === 5) strength = WHEEL_STRENGTH[a2345 || "lowest"];
    }
    if (strength) {
      cat = flush ? CATEGORY.straight_flush : CATEGORY.straight;
      digits = [strength];
    } else if (shape[0] === 4) cat = CATEGORY.quads;
    else if (shape[0] === 3) cat = shape[1] === 2 ? CATEGORY.full_house : CATEGORY.trips;
    else if (flush) cat = CATEGORY.flush;
    else if (shape[0] === 2) cat = shape[1] === 2 ? CATEGORY.two_pair : CATEGORY.pair;
    else cat = CATEGORY.high_card;
    const frontLike = cat === CATEGORY.high_card || cat === CATEGORY.pair || cat === CATEGORY.trips;
    return {
      size: 5,
      category: CATEGORY_IDS[cat],
      digits,
      key: pack(cat, digits, 5),
      cross: pack(cat, frontLike ? digits : [], 3),
    };
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

  function sortByRank(cards) {
    return cards
      .slice()
      .sort((a, b) => rankOf(b) - rankOf(a) || SUITS.indexOf(suitOf(a)) - SUITS.indexOf(suitOf(b)));
  }

  function sortBySuit(cards) {
    return cards
      .slice()
      .sort((a, b) => SUITS.indexOf(suitOf(a)) - SUITS.indexOf(suitOf(b)) || rankOf(b) - rankOf(a));
  }

  // One card element: rank and suit in a corner, the suit large in the middle.
  function cardElement(card, options) {
    const el = document.createElement("div");
    el.className = "card " + (isRed(card) ? "red" : "black");
    if (options && options.small) el.classList.add("small");
    el.dataset.card = card;
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", rankLabel(card) + SUIT_SYMBOL[suitOf(card)]);
    const corner = document.createElement("span");
    corner.className = "corner";
    const r = document.createElement("span");
    r.className = "rank";
    r.textContent = rankLabel(card);
    const s = document.createElement("span");
    s.className = "suit";
    s.textContent = SUIT_SYMBOL[suitOf(card)];
    corner.append(r, s);
    const pip = document.createElement("span");
    pip.className = "pip";
    pip.textContent = SUIT_SYMBOL[suitOf(card)];
    el.append(corner, pip);
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
    rankOf,
    suitOf,
    isRed,
    evaluate,
    compareHands,
    foulRows,
    sortByRank,
    sortBySuit,
    cardElement,
    cardBack,
  };
})();

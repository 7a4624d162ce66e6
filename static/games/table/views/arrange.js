// Arranging: the hand and the three rows, selection and taps, drag and drop (the vendored
// SortableJS at window.Sortable), the hand-type buttons (RULES.md §6: each selects the
// strongest group of its type among the cards not yet placed, pressed again the next one),
// the sort button (rank → suit → count), reset, the live foul check and Submit. When two rows
// are full, the cards left go to the third by themselves. On a desktop, a double-click clears
// the selection (on a card of a row: that card back to the hand) and a right-click on a card
// selects the unplaced cards of its suit. A full row is shown in order: a straight low to high.
// The view changes the layout only through ctx.setLayout(); actions go through ctx.act().
// With spare cards (RULES.md §12.4) the tray holds the cards set aside: one of them and one
// of the 13 kept swap places when tapped one after the other, or when one is dropped on the
// other. A full row's jokers show what they stand for.
import {
  ROWS,
  ROW_SIZE,
  PLAY_PHASES,
  canArrange,
  spareOf,
  swapCards,
  initialLayout,
  applySuggestion,
  readyToSubmit,
  submitFields,
  shownSuggestions,
  rowJokers,
  autoFilled,
  handTypeGroups,
  handTypesFor,
  fiveOfAKindIn,
  nextGroup,
  nextSort,
  rowDisplayOrder,
  sortCards,
} from "../state.js";
import { C, _, fmt, $, el, signed, toast, ROW_NAMES } from "./common.js";
import { renderSuggestions } from "./suggestions.js";

const ZONES = ["hand"].concat(ROWS, ["tray"]);

const AUTO_REASONS = {
  timeout: _("time ran out"),
  hosted: _("you were away (hosted)"),
  escaped: _("you left the round"),
};

// The card elements of this hand, made once so drag and drop keeps hold of them; a joker's
// face is redrawn when what it stands for changes (`stands`, a card like "AS", or none).
const cardNodes = new Map();
function cardNode(card, stands) {
  let node = cardNodes.get(card);
  const options = stands ? { stands } : undefined;
  if (!node) {
    node = C.cardElement(card, options);
    cardNodes.set(card, node);
  } else if ((node.dataset.stands || "") !== (stands || "") && isJoker(card)) {
    const fresh = C.cardElement(card, options);
    node.replaceChildren(...fresh.childNodes);
    if (stands) node.dataset.stands = stands;
    else delete node.dataset.stands;
    node.setAttribute("aria-label", fresh.getAttribute("aria-label") || card);
  }
  return node;
}

export function isJoker(card) {
  return C.isJoker ? C.isJoker(card) : card === "RJ" || card === "BJ";
}

// A card is being dragged (SortableJS holds its node): the zones are left as they are until
// the drop, which renders them from the new layout. Moving the node back while the mouse is
// down (an event arriving mid-drag: a draft saved, a player submitting) would lose the drag.
let dragging = false;

function fillZone(ctx, zone, cards, landed, options) {
  const box = ctx.root.querySelector('.zone[data-zone="' + zone + '"]');
  if (dragging) return box;
  const jokers = (options && options.jokers) || {};
  const wanted = cards.map((c) => {
    const node = cardNode(c, jokers[c]);
    node.classList.toggle("selected", ctx.ui.selected.has(c));
    node.classList.toggle("undealt", !landed.has(c) && !(options && options.shown));
    node.classList.toggle("foul", Boolean(options && options.foul));
    return node;
  });
  wanted.forEach((node, i) => {
    if (box.children[i] !== node) box.insertBefore(node, box.children[i] || null);
  });
  while (box.children.length > wanted.length) box.lastChild.remove();
  return box;
}

export function currentFoul(ctx) {
  const state = ctx.state;
  if (ctx.ui.serverFoul && ctx.ui.serverFoul.length) return ctx.ui.serverFoul;
  const a2345 = state.table.config ? state.table.config.a2345 : "lowest";
  return C.foulRows(state.layout, a2345).rows;
}

// A card of my hand lands (the deal's animation, once).
export function landCard(ctx, card) {
  const node = ctx.root.querySelector('.zone [data-card="' + card + '"]');
  if (node) {
    node.classList.remove("undealt");
    node.classList.add("dealt");
    // Once: moving the card to a row later must not replay the animation.
    node.addEventListener("animationend", () => node.classList.remove("dealt"), { once: true });
  }
}

export function renderArrange(ctx, view) {
  const state = ctx.state;
  const table = state.table;
  const you = state.you;
  const layout = state.layout;
  const section = $("arrange");
  const seat = table.seats[state.me];
  const hasCards = Boolean(you.hand) && Boolean(seat && (seat.in_round || table.result));
  section.hidden = !hasCards || you.special_choice === true;
  if (section.hidden) return;
  const editable = canArrange(state);
  const landed = ctx.landed();
  section.classList.toggle("locked", !editable);
  section.classList.toggle("spare", spareOf(table.config) > 0);
  section.classList.toggle("compare-mode", !PLAY_PHASES.includes(table.phase) && table.phase !== "dealing");
  const fouled = editable ? currentFoul(ctx) : [];
  const a2345 = table.config ? table.config.a2345 : "lowest";
  const spare = spareOf(table.config);
  const known = you.arrangement && you.arrangement.jokers;
  ROWS.forEach((r) => {
    const zone = ctx.root.querySelector('.row-zone[data-row="' + r + '"]');
    const jokers = rowJokers(layout[r], known, ROW_SIZE[r], C.evaluate, a2345);
    fillZone(ctx, r, shownRow(layout[r], a2345), landed, { foul: fouled.includes(r), shown: true, jokers });
    zone.classList.toggle("full", layout[r].length === ROW_SIZE[r]);
    zone.classList.toggle("foul", fouled.includes(r));
    zone.querySelector(".row-name").textContent = ROW_NAMES[r] + " " + layout[r].length + "/" + ROW_SIZE[r];
    let cat = "";
    if (layout[r].length === ROW_SIZE[r]) cat = ctx.words.categoryName(C.evaluate(layout[r], a2345).category);
    zone.querySelector(".row-cat").textContent = cat;
    const mine = view.rows[state.me] && view.rows[state.me][r];
    const water = zone.querySelector(".row-water");
    const w = mine ? mine.water : null;
    water.textContent = w === null || w === undefined ? "" : signed(w);
    water.className = "row-water " + (w > 0 ? "plus" : w < 0 ? "minus" : "");
  });
  fillZone(ctx, "hand", layout.hand, landed);
  ctx.root.querySelector(".hand-box").hidden = !editable && layout.hand.length === 0;
  const trayBox = ctx.root.querySelector(".tray-box");
  trayBox.hidden = !spare || !(layout.tray || []).length;
  fillZone(ctx, "tray", spare ? layout.tray || [] : [], landed);
  if (spare) {
    trayBox.querySelector(".tray-name").textContent = fmt(_("Set aside (%(n)s)"), { n: spare });
    trayBox.querySelector(".tray-help").textContent = editable
      ? _("Tap one of these, then a card of yours, to swap them.")
      : _("Not played: shown to everyone at the reveal.");
  }
  const warning = $("foul-warning");
  if (fouled.length) {
    warning.hidden = false;
    warning.dataset.rows = fouled.join(",");
    warning.textContent = fmt(_("Foul (相公): %(rows)s — the back must be ≥ the middle ≥ the front."), {
      rows: fouled.map((r) => ROW_NAMES[r]).join(", "),
    });
  } else {
    warning.hidden = true;
    warning.dataset.rows = "";
    warning.textContent = "";
  }
  const submit = $("submit-button");
  submit.disabled = !editable || !readyToSubmit(layout, spare) || fouled.length > 0 || ctx.ui.submitting;
  $("toolbar").hidden = !editable;
  ["sort", "reset"].forEach((id) => ($(id).disabled = !editable));
  renderSort(ctx);
  renderHandTypes(ctx, editable);
  const notice = $("auto-notice");
  if (you.auto && you.arrangement) {
    notice.hidden = false;
    notice.textContent = fmt(_("Auto-arranged (已自动理牌): %(why)s."), {
      why: AUTO_REASONS[you.auto] || you.auto,
    });
  } else notice.hidden = true;
  renderSuggestions(ctx, editable);
  sortables.forEach((s) => s.option("disabled", !editable));
}

// A full row in the order it is shown (a straight low to high, other hands groups first).
function shownRow(cards, a2345) {
  if (cards.length !== 3 && cards.length !== 5) return cards;
  try {
    return rowDisplayOrder(cards, C.evaluate(cards, a2345));
  } catch (e) {
    return cards;
  }
}

// ---- sorting and the hand-type buttons ----------------------------------------------------------

const SORT_NAMES = { rank: _("Sort: rank"), suit: _("Sort: suit"), count: _("Sort: count") };

// The order the hand area is kept in (ctx.ui.sortOrder): by rank when a new hand opens.
function renderSort(ctx) {
  const key = (ctx.state.you.hand || []).join(" ");
  if (ctx.ui.sortedHand !== key) {
    ctx.ui.sortedHand = key;
    ctx.ui.sortOrder = "rank";
  }
  const button = $("sort");
  button.dataset.order = ctx.ui.sortOrder;
  button.textContent = SORT_NAMES[ctx.ui.sortOrder];
  button.title = _("Sort the hand by rank, by suit or by count (groups first)");
}

function groupOptions(ctx) {
  const config = ctx.state.table.config;
  return { a2345: config ? config.a2345 : "lowest", fiveOfAKind: fiveOfAKindIn(config) };
}

// One button per hand type of the deck: enabled when the cards not yet placed hold one; the
// one last pressed, while its group is the selection, is marked active and says which of its
// groups that is ("2/3", on a desktop).
function renderHandTypes(ctx, editable) {
  const box = $("handtypes");
  box.hidden = !editable;
  if (!editable) return;
  const types = handTypesFor(ctx.state.table.config);
  if (box.dataset.types !== types.join(" ")) {
    box.dataset.types = types.join(" ");
    box.textContent = "";
    types.forEach((type) => {
      const button = el("button", "btn handtype");
      button.type = "button";
      button.dataset.type = type;
      button.setAttribute("data-testid", "handtype-" + type);
      button.append(el("span", "ht-name", ctx.words.categoryName(type)), el("span", "ht-count", ""));
      box.append(button);
    });
  }
  const hand = ctx.state.layout.hand;
  const key = (cards) => cards.slice().sort().join(" ");
  const selected = key([...ctx.ui.selected]);
  const options = groupOptions(ctx);
  box.querySelectorAll("button[data-type]").forEach((button) => {
    const groups = handTypeGroups(hand, button.dataset.type, options);
    button.disabled = groups.length === 0;
    button.dataset.groups = String(groups.length);
    const at = ctx.ui.handType === button.dataset.type ? groups.findIndex((g) => key(g) === selected) : -1;
    button.classList.toggle("active", at >= 0);
    button.querySelector(".ht-count").textContent = at >= 0 ? at + 1 + "/" + groups.length : "";
  });
}

// ---- the player's hands on the cards --------------------------------------------------------
function zoneOf(layout, card) {
  return ZONES.find((z) => (layout[z] || []).includes(card));
}

const SWAP_HINT = _("A set-aside card is swapped: tap it, then one of your cards (or drop it on one).");

// A tray card and a kept card exchange places.
function swap(ctx, a, b) {
  const next = swapCards(ctx.state.layout, a, b);
  ctx.ui.selected.clear();
  if (!next) {
    ctx.render();
    return;
  }
  ctx.setLayout(next);
  ctx.changed();
}

function moveSelected(ctx, to) {
  const selected = ctx.ui.selected;
  const cards = [...selected];
  if (!cards.length) return;
  const current = ctx.state.layout;
  if (to === "tray" || cards.some((c) => zoneOf(current, c) === "tray")) {
    toast(SWAP_HINT, true);
    return;
  }
  const room = to === "hand" ? 13 : ROW_SIZE[to] - current[to].filter((c) => !selected.has(c)).length;
  if (cards.length > room) {
    toast(fmt(_("%(row)s has room for %(n)s more cards."), { row: ROW_NAMES[to], n: Math.max(0, room - 0) }), true);
    return;
  }
  const layout = { hand: current.hand.slice(), front: current.front.slice(), middle: current.middle.slice(), back: current.back.slice() };
  if (current.tray) layout.tray = current.tray.slice();
  cards.forEach((c) => {
    const from = zoneOf(layout, c);
    if (from === to) return;
    layout[from] = layout[from].filter((x) => x !== c);
    layout[to].push(c);
  });
  selected.clear();
  ctx.setLayout(placed(ctx, current, layout));
  ctx.changed();
}

// A layout the player changed, tidied: cards back in the hand area take their place in its
// order; when cards left the hand area and two rows are full, the rest fill the third.
function placed(ctx, before, layout) {
  let next = layout;
  if (layout.hand.some((c) => !before.hand.includes(c))) {
    next = Object.assign({}, next, { hand: sortCards(next.hand, ctx.ui.sortOrder) });
  }
  if (layout.hand.length < before.hand.length) next = autoFilled(next) || next;
  return next;
}

// ctx: {root, state, ui, setLayout(layout), changed(), render(), act(type, fields)}
export function setUpArrange(ctx) {
  const selected = ctx.ui.selected;
  const editable = () => canArrange(ctx.state);
  $("arrange").addEventListener("click", (event) => {
    if (!editable() || event.target.closest(".suggestions-box")) return;
    const card = event.target.closest(".card");
    const rowZone = event.target.closest(".row-zone");
    const zone = rowZone ? rowZone.querySelector(".zone") : event.target.closest("[data-zone]");
    if (card && card.dataset.card) {
      const id = card.dataset.card;
      const layout = ctx.state.layout;
      const from = zoneOf(layout, id);
      if (!from) return;
      // A tray card and a kept card, tapped one after the other: they swap places.
      if (selected.size === 1 && !selected.has(id)) {
        const other = [...selected][0];
        if ((zoneOf(layout, other) === "tray") !== (from === "tray")) {
          swap(ctx, other, id);
          return;
        }
      }
      // A tray card is only ever swapped: it is selected alone.
      if (from === "tray" || [...selected].some((c) => zoneOf(layout, c) === "tray")) {
        const again = selected.has(id) && selected.size === 1;
        selected.clear();
        if (!again) selected.add(id);
        ctx.render();
        return;
      }
      const target = zone ? zone.dataset.zone : null;
      // Clicking a card of another zone while cards are selected places them there.
      if (
        selected.size &&
        !selected.has(id) &&
        target &&
        zoneOf(ctx.state.layout, [...selected][0]) !== target &&
        target !== "hand"
      ) {
        moveSelected(ctx, target);
        return;
      }
      if (selected.has(id)) selected.delete(id);
      else selected.add(id);
      ctx.render();
      return;
    }
    if (zone && selected.size) moveSelected(ctx, zone.dataset.zone);
  });

  // A double-click clears the selection; on a card of a row it also sends that card back.
  $("arrange").addEventListener("dblclick", (event) => {
    if (!editable() || event.target.closest(".suggestions-box, .handtypes, .toolbar")) return;
    const card = event.target.closest(".card");
    selected.clear();
    if (!card || ["hand", "tray", undefined].includes(zoneOf(ctx.state.layout, card.dataset.card))) {
      ctx.render();
      return;
    }
    selected.add(card.dataset.card);
    moveSelected(ctx, "hand");
  });

  // A right-click on a card selects every unplaced card of its suit (no context menu there).
  $("arrange").addEventListener("contextmenu", (event) => {
    const card = event.target.closest(".zone .card[data-card]");
    if (!card) return;
    event.preventDefault();
    if (!editable() || isJoker(card.dataset.card)) return;
    const suit = C.suitOf(card.dataset.card);
    selected.clear();
    ctx.state.layout.hand.filter((c) => !isJoker(c) && C.suitOf(c) === suit).forEach((c) => selected.add(c));
    ctx.ui.handType = null;
    ctx.render();
  });

  // The hand-type buttons: the strongest group of the type, then (pressed again) the next.
  $("handtypes").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-type]");
    if (!button || button.disabled || !editable()) return;
    const type = button.dataset.type;
    const groups = handTypeGroups(ctx.state.layout.hand, type, groupOptions(ctx));
    const current = ctx.ui.handType === type ? [...selected] : [];
    const group = nextGroup(groups, current);
    selected.clear();
    (group || []).forEach((c) => selected.add(c));
    ctx.ui.handType = group ? type : null;
    ctx.render();
  });

  // The sort button: the hand area (and the tray) in the next order, rank → suit → count.
  $("sort").addEventListener("click", () => {
    const layout = ctx.state.layout;
    ctx.ui.sortOrder = nextSort(ctx.ui.sortOrder || "rank");
    const patch = { hand: sortCards(layout.hand, ctx.ui.sortOrder) };
    if (layout.tray) patch.tray = sortCards(layout.tray, ctx.ui.sortOrder);
    ctx.setLayout(Object.assign({}, layout, patch));
    ctx.changed();
  });
  // Everything back to the hand area; with spare cards the tray back to the first choice.
  $("reset").addEventListener("click", () => {
    const you = ctx.state.you;
    const layout = initialLayout(you.hand || [], you.suggestions, spareOf(ctx.state.table.config));
    layout.hand = sortCards(layout.hand, "rank");
    ctx.ui.sortOrder = "rank";
    ctx.setLayout(layout);
    selected.clear();
    ctx.changed();
  });
  $("suggestions").addEventListener("click", (event) => {
    const button = event.target.closest("[data-testid=suggestion]");
    if (!button || !editable()) return;
    const state = ctx.state;
    const s = (shownSuggestions(state).list || [])[Number(button.dataset.index)];
    if (!s) return;
    ctx.setLayout(applySuggestion(state.layout, s, state.you.hand || [], spareOf(state.table.config)));
    selected.clear();
    ctx.changed();
  });
  $("submit-button").addEventListener("click", () => {
    const state = ctx.state;
    const spare = spareOf(state.table.config);
    if (!editable() || currentFoul(ctx).length || !readyToSubmit(state.layout, spare)) return;
    ctx.ui.submitting = ctx.act("submit", submitFields(state.layout, spare));
    ctx.render();
  });
  setUpDragAndDrop(ctx);
}

// A card moved between the tray and the 13 kept is never put into the other zone by
// SortableJS (no zone takes it: nothing reflows under the pointer); it swaps with the card it
// is dropped on, found from where the pointer was last seen during the drag (`dragover` for
// the mouse, `touchmove` for SortableJS's touch fallback), and highlighted meanwhile.
let pointer = null; // {x, y}: the pointer during the drag
let dragged = null; // the card being dragged
let target = null; // the card element it would swap with

function cardAt(root, point) {
  if (!point) return null;
  const hit = document.elementFromPoint(point.x, point.y);
  const card = hit && hit.closest(".zone .card[data-card]");
  return card && root.contains(card) && card.dataset.card !== dragged ? card : null;
}

function swapTarget(ctx) {
  const layout = ctx.state.layout;
  const card = cardAt(ctx.root, pointer);
  if (!layout.tray || !card || !dragged) return null;
  const inTray = (c) => layout.tray.includes(c);
  return inTray(card.dataset.card) !== inTray(dragged) ? card : null;
}

function highlight(ctx) {
  const next = swapTarget(ctx);
  if (next === target) return;
  if (target) target.classList.remove("swap-target");
  target = next;
  if (target) target.classList.add("swap-target");
}

// Drag and drop (SortableJS): a row takes at most its size; the hand takes any card; the
// tray only reorders its own (a swap is made on the drop, above).
const sortables = [];
function setUpDragAndDrop(ctx) {
  if (!window.Sortable) return;
  const track = (x, y) => {
    if (!dragging) return;
    pointer = { x, y };
    highlight(ctx);
  };
  // In the capture phase: SortableJS stops a `dragover` over its lists from bubbling.
  document.addEventListener("dragover", (e) => track(e.clientX, e.clientY), true);
  document.addEventListener(
    "touchmove",
    (e) => e.touches && e.touches[0] && track(e.touches[0].clientX, e.touches[0].clientY),
    { passive: true, capture: true },
  );
  const isTray = (el) => el.dataset.zone === "tray";
  ctx.root.querySelectorAll(".zone").forEach((box) => {
    const zone = box.dataset.zone;
    sortables.push(
      window.Sortable.create(box, {
        group: {
          name: "cards",
          put: (to, from) =>
            isTray(to.el) === isTray(from.el) && (zone === "hand" || to.el.children.length < ROW_SIZE[zone]),
        },
        animation: 150,
        delay: 120,
        delayOnTouchOnly: true,
        ghostClass: "ghost",
        chosenClass: "chosen",
        onStart: (evt) => {
          dragging = true;
          pointer = null;
          dragged = evt.item.dataset.card;
        },
        onEnd: () => {
          dragging = false;
          const before = ctx.state.layout;
          const partner = swapTarget(ctx);
          const moved = dragged;
          if (target) target.classList.remove("swap-target");
          target = null;
          dragged = null;
          pointer = null;
          if (partner) {
            const next = swapCards(before, moved, partner.dataset.card);
            ctx.ui.selected.clear();
            if (next) ctx.setLayout(next);
            ctx.render();
            if (next) setTimeout(ctx.changed, 0);
            return;
          }
          const next = {};
          ctx.root.querySelectorAll(".zone").forEach((z) => {
            next[z.dataset.zone] = [...z.querySelectorAll(".card")].map((c) => c.dataset.card);
          });
          if (!before.tray) delete next.tray;
          if (ROWS.some((r) => next[r].length > ROW_SIZE[r])) {
            ctx.render();
            return;
          }
          ctx.setLayout(next.hand.length < before.hand.length ? autoFilled(next) || next : next);
          setTimeout(ctx.changed, 0);
        },
      }),
    );
  });
}

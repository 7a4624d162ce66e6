// Arranging: the hand and the three rows, selection and taps, drag and drop (the vendored
// SortableJS at window.Sortable), sorting, reset, the live foul check and Submit. The view
// changes the layout only through ctx.setLayout(); actions go through ctx.act().
import { ROWS, ROW_SIZE, PLAY_PHASES, canArrange } from "../state.js";
import { C, _, fmt, $, el, signed, toast, ROW_NAMES } from "./common.js";
import { renderSuggestions } from "./suggestions.js";

const AUTO_REASONS = {
  timeout: _("time ran out"),
  hosted: _("you were away (hosted)"),
  escaped: _("you left the round"),
};

// The card elements of this hand, made once so drag and drop keeps hold of them.
const cardNodes = new Map();
function cardNode(card) {
  let node = cardNodes.get(card);
  if (!node) {
    node = C.cardElement(card);
    cardNodes.set(card, node);
  }
  return node;
}

// A card is being dragged (SortableJS holds its node): the zones are left as they are until
// the drop, which renders them from the new layout. Moving the node back while the mouse is
// down (an event arriving mid-drag: a draft saved, a player submitting) would lose the drag.
let dragging = false;

function fillZone(ctx, zone, cards, landed, options) {
  const box = ctx.root.querySelector('.zone[data-zone="' + zone + '"]');
  if (dragging) return box;
  const wanted = cards.map((c) => {
    const node = cardNode(c);
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
  section.classList.toggle("compare-mode", !PLAY_PHASES.includes(table.phase) && table.phase !== "dealing");
  const fouled = editable ? currentFoul(ctx) : [];
  const a2345 = table.config ? table.config.a2345 : "lowest";
  ROWS.forEach((r) => {
    const zone = ctx.root.querySelector('.row-zone[data-row="' + r + '"]');
    fillZone(ctx, r, layout[r], landed, { foul: fouled.includes(r), shown: true });
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
  const placed = ROWS.every((r) => layout[r].length === ROW_SIZE[r]);
  const submit = $("submit-button");
  submit.disabled = !editable || !placed || fouled.length > 0 || ctx.ui.submitting;
  $("toolbar").hidden = !editable;
  ["sort-rank", "sort-suit", "reset"].forEach((id) => ($(id).disabled = !editable));
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

// ---- the player's hands on the cards --------------------------------------------------------
function zoneOf(layout, card) {
  return ["hand"].concat(ROWS).find((z) => layout[z].includes(card));
}

function moveSelected(ctx, to) {
  const selected = ctx.ui.selected;
  const cards = [...selected];
  if (!cards.length) return;
  const current = ctx.state.layout;
  const room = to === "hand" ? 13 : ROW_SIZE[to] - current[to].filter((c) => !selected.has(c)).length;
  if (cards.length > room) {
    toast(fmt(_("%(row)s has room for %(n)s more cards."), { row: ROW_NAMES[to], n: Math.max(0, room - 0) }), true);
    return;
  }
  const layout = { hand: current.hand.slice(), front: current.front.slice(), middle: current.middle.slice(), back: current.back.slice() };
  cards.forEach((c) => {
    const from = zoneOf(layout, c);
    if (from === to) return;
    layout[from] = layout[from].filter((x) => x !== c);
    layout[to].push(c);
  });
  selected.clear();
  ctx.setLayout(layout);
  ctx.changed();
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

  $("arrange").addEventListener("dblclick", (event) => {
    if (!editable()) return;
    const card = event.target.closest(".card");
    if (!card || zoneOf(ctx.state.layout, card.dataset.card) === "hand") return;
    selected.clear();
    selected.add(card.dataset.card);
    moveSelected(ctx, "hand");
  });

  $("sort-rank").addEventListener("click", () => {
    ctx.setLayout(Object.assign({}, ctx.state.layout, { hand: C.sortByRank(ctx.state.layout.hand) }));
    ctx.changed();
  });
  $("sort-suit").addEventListener("click", () => {
    ctx.setLayout(Object.assign({}, ctx.state.layout, { hand: C.sortBySuit(ctx.state.layout.hand) }));
    ctx.changed();
  });
  $("reset").addEventListener("click", () => {
    ctx.setLayout({ hand: C.sortByRank(ctx.state.you.hand || []), front: [], middle: [], back: [] });
    selected.clear();
    ctx.changed();
  });
  $("suggestions").addEventListener("click", (event) => {
    const button = event.target.closest("[data-testid=suggestion]");
    if (!button || !editable()) return;
    const s = ctx.state.you.suggestions[Number(button.dataset.index)];
    ctx.setLayout({ hand: [], front: s.front.slice(), middle: s.middle.slice(), back: s.back.slice() });
    selected.clear();
    ctx.changed();
  });
  $("submit-button").addEventListener("click", () => {
    if (!editable() || currentFoul(ctx).length) return;
    const layout = ctx.state.layout;
    ctx.ui.submitting = ctx.act("submit", { front: layout.front, middle: layout.middle, back: layout.back });
    ctx.render();
  });
  setUpDragAndDrop(ctx);
}

// Drag and drop (SortableJS): a row takes at most its size; the hand takes any card.
const sortables = [];
function setUpDragAndDrop(ctx) {
  if (!window.Sortable) return;
  ctx.root.querySelectorAll(".zone").forEach((box) => {
    const zone = box.dataset.zone;
    sortables.push(
      window.Sortable.create(box, {
        group: {
          name: "cards",
          put: (to) => zone === "hand" || to.el.children.length < ROW_SIZE[zone],
        },
        animation: 150,
        delay: 120,
        delayOnTouchOnly: true,
        ghostClass: "ghost",
        chosenClass: "chosen",
        onStart: () => {
          dragging = true;
        },
        onEnd: () => {
          dragging = false;
          const next = {};
          ctx.root.querySelectorAll(".zone").forEach((z) => {
            next[z.dataset.zone] = [...z.querySelectorAll(".card")].map((c) => c.dataset.card);
          });
          if (ROWS.some((r) => next[r].length > ROW_SIZE[r])) {
            ctx.render();
            return;
          }
          ctx.setLayout(next);
          setTimeout(ctx.changed, 0);
        },
      }),
    );
  });
}

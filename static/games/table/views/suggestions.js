// The best three suggestions drawn as small cards with their expected water; the rest on
// demand. One tap applies one (the click is handled by arrange.js). With spare cards they are
// the deal's while the tray is one of theirs, else the `suggest` reply for the 13 kept
// (state.shownSuggestions); a joker shows what it stands for.
import { ROWS, shownSuggestions, spareOf, cardsKey, rowDisplayOrder } from "../state.js";
import { C, _, fmt, $, el, signed, ROW_NAMES } from "./common.js";

const SUGGESTIONS_SHOWN = 3;

// ctx.ui.showAllSuggestions: the "more" toggle.
export function setUpSuggestions(ctx) {
  $("suggestions-more").addEventListener("click", () => {
    ctx.ui.showAllSuggestions = !ctx.ui.showAllSuggestions;
    ctx.render();
  });
}

export function renderSuggestions(ctx, editable) {
  const list = $("suggestions");
  const box = ctx.root.querySelector(".suggestions-box");
  const offered = shownSuggestions(ctx.state);
  const waiting = offered.list === null;
  const items = offered.list || [];
  const spare = spareOf(ctx.state.table.config);
  box.hidden = !editable || (items.length === 0 && !waiting);
  if (box.hidden) return;
  if (waiting) {
    $("suggestions-more").hidden = true;
    const waitingKey = offered.fromDeal ? "waiting-deal" : "waiting";
    if (list.dataset.key === waitingKey) return;
    list.dataset.key = waitingKey;
    list.textContent = "";
    const text = offered.fromDeal
      ? _("Finding suggestions…")
      : _("Finding suggestions for the 13 cards you keep…");
    list.append(el("li", "sg-waiting", text));
    return;
  }
  const more = $("suggestions-more");
  const shown = ctx.ui.showAllSuggestions ? items : items.slice(0, SUGGESTIONS_SHOWN);
  more.hidden = items.length <= SUGGESTIONS_SHOWN;
  more.textContent = ctx.ui.showAllSuggestions
    ? _("Fewer")
    : fmt(_("%(n)s more"), { n: items.length - SUGGESTIONS_SHOWN });
  const trayKey = cardsKey(ctx.state.layout.tray || []);
  const key = JSON.stringify([trayKey].concat(shown.map((s) => s.front.concat(s.middle, s.back, s.unused || []))));
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.textContent = "";
  shown.forEach((s, i) => {
    const li = el("li", "suggestion");
    const button = el("button", "suggestion-button");
    button.type = "button";
    button.setAttribute("data-testid", "suggestion");
    button.dataset.index = i;
    const head = el("span", "sg-head");
    head.append(el("span", "sg-rank", i === 0 ? _("Best") : "#" + (i + 1)));
    if (typeof s.expected_water === "number") {
      const value = signed(Math.round(s.expected_water * 10) / 10);
      // The whole phrase, and the number alone for a phone's narrow thumbnails.
      const water = el("span", "sg-water");
      water.append(el("span", "sg-water-long", fmt(_("≈ %(water)s water"), { water: value })));
      water.append(el("span", "sg-water-short", "≈ " + value));
      water.title = _("Expected water against random opponents");
      head.append(water);
    }
    button.append(head);
    const jokers = s.jokers || {};
    const picture = (card) => {
      const node = C.cardElement(card, { small: true, stands: jokers[card] });
      delete node.dataset.card; // a picture, not one of the hand's cards
      return node;
    };
    ROWS.forEach((r, k) => {
      const part = el("span", "sg-row");
      const cards = el("span", "sg-cards");
      // As a row is shown: a straight low to high (23456).
      rowDisplayOrder(s[r], { category: s.categories[k], jokers }).forEach((card) => cards.append(picture(card)));
      part.append(cards);
      part.append(el("span", "sg-cat", ctx.words.categoryName(s.categories[k])));
      part.title = ROW_NAMES[r];
      button.append(part);
    });
    // What a deal suggestion sets aside, when applying it changes the tray.
    if (spare && Array.isArray(s.unused) && s.unused.length && cardsKey(s.unused) !== trayKey) {
      const part = el("span", "sg-row sg-aside");
      const cards = el("span", "sg-cards");
      s.unused.forEach((card) => cards.append(picture(card)));
      part.append(cards);
      part.append(el("span", "sg-cat", _("set aside")));
      part.title = _("Set aside");
      button.append(part);
    }
    li.append(button);
    list.append(li);
  });
}

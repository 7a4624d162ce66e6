// The seats around the felt, yours at the bottom: name, badges, the coins of the last
// settlement, and what each opponent shows (card backs while dealt, its rows once revealed
// with the head-to-head water for you, its special hand, the cards it set aside with spare
// cards; a joker shows what it stands for).
import {
  ROWS,
  ROW_SIZE,
  PLAY_PHASES,
  dealtTo,
  specialWater,
  versusFor,
  spareOf,
  rowDisplayOrder,
} from "../state.js";
import { C, _, fmt, $, el, number, signed } from "./common.js";

// Counter-clockwise order goes to your right.
const PLACES = {
  2: ["bottom", "top"],
  3: ["bottom", "right", "left"],
  4: ["bottom", "right", "top", "left"],
  5: ["bottom", "right", "top-right", "top-left", "left"],
  6: ["bottom", "right", "top-right", "top", "top-left", "left"],
};

// Small card pictures; a joker with what it stands for (`jokers`: {"RJ": "AS"}).
function smallCards(cards, jokers, className) {
  const box = el("div", className || "mini-cards");
  (cards || []).forEach((c) => {
    const stands = jokers && jokers[c];
    box.append(C.cardElement(c, stands ? { small: true, stands } : { small: true }));
  });
  return box;
}

// A player's set-aside cards (spare cards), face up and dimmed, once revealed.
export function setAside(cards, position) {
  const line = el("div", "set-aside");
  line.setAttribute("data-testid", "set-aside");
  line.dataset.position = position;
  line.title = _("Set aside: not played");
  line.append(el("span", "set-aside-label", _("Set aside")));
  line.append(smallCards(cards, null, "mini-cards aside-cards"));
  return line;
}

// ctx: {cfg, state, words, ui, view (compareAt now), dealElapsed(), readOnly}
export function renderSeats(ctx, view) {
  const state = ctx.state;
  const table = state.table;
  const ME = state.me;
  const { nameOf } = ctx.words;
  const box = $("seats");
  box.textContent = "";
  const n = table.capacity || ctx.cfg.seats;
  const places = PLACES[n] || PLACES[4];
  const felt = box.parentNode;
  felt.dataset.seats = String(n);
  felt.toggleAttribute("data-spare", spareOf(table.config) > 0);
  for (let position = 0; position < n; position++) {
    const rel = (position - Math.max(ME, 0) + n) % n; // a spectator (-1) sees seat 0 below
    const seat = table.seats[position];
    const node = el("div", "seat place-" + places[rel]);
    node.dataset.position = position;
    if (!seat) {
      node.classList.add("empty");
      node.append(el("div", "seat-name", _("Empty seat")));
      box.append(node);
      continue;
    }
    node.setAttribute("data-testid", "seat");
    if (position === ME) node.dataset.me = "true";
    const head = el("div", "seat-head");
    const label = nameOf(position);
    const avatar = el("span", "avatar", (Array.from(label)[0] || "?").toUpperCase());
    avatar.style.backgroundColor = "hsl(" + hue(label) + " 55% 42%)"; // one colour per name
    avatar.style.color = "#fff";
    const name = el("span", "seat-name", nameOf(position));
    if (position === ME) name.append(el("span", "you", " (" + _("you") + ")"));
    name.title = nameOf(position);
    head.append(avatar, name);
    node.append(head);
    const badges = el("div", "badges");
    const badge = (text, cls) => badges.append(el("span", "badge " + cls, text));
    if (!seat.connected) badge(_("Offline"), "offline");
    if (seat.hosted) badge(_("Hosted 托管"), "hosted");
    if (seat.escaped) badge(_("Escaped"), "escaped");
    if (["waiting", "settled"].includes(table.phase)) {
      if (seat.ready) badge(_("Ready"), "ready");
      else badge(_("Not ready"), "waiting");
    } else if (seat.in_round) {
      if (seat.done) badge(seat.auto ? _("Auto-played") : _("Submitted"), "done");
      else if (PLAY_PHASES.includes(table.phase)) badge(_("Arranging…"), "thinking");
    } else {
      badge(_("Watching"), "waiting");
    }
    node.append(badges);
    const stamps = marks(ctx, view, position);
    if (stamps.length) {
      const box = el("div", "seat-marks");
      box.append(...stamps);
      node.append(box);
    }
    const player = table.result && (table.result.players || []).find((p) => p.position === position);
    if (player) {
      // What the seat's wallet moved: the round's delta less its table fee.
      const net = player.delta - (player.fee || 0);
      const delta = el("div", "seat-delta " + (net >= 0 ? "plus" : "minus"), signed(net));
      delta.title = fmt(_("%(water)s water"), { water: signed(player.water) });
      node.append(delta);
    }
    // Read-only (a replay): no wallet, and no hand of one's own to arrange below the felt, so
    // one's seat shows what everyone saw of it.
    if (position === ME && !ctx.readOnly) node.append(el("div", "seat-balance", number(ctx.ui.balance)));
    if (position !== ME || ctx.readOnly) node.append(seatCards(ctx, view, position, seat));
    else if (state.you.special_choice === true && state.you.hand) node.append(mySpecial(ctx));
    box.append(node);
  }
}

// What an opponent shows: card backs while dealt, its rows once revealed, its special.
function seatCards(ctx, view, position, seat) {
  const state = ctx.state;
  const { nameOf, categoryName, specialName } = ctx.words;
  const wrap = el("div", "seat-cards");
  const special = view.specials[position];
  const rows = view.rows[position];
  const aside = (view.unused || {})[position];
  if (special) {
    wrap.append(el("div", "special-tag", specialName(special.special) + " · " + special.water));
    const line = el("div", "mini-row");
    line.append(smallCards(special.cards, special.jokers, "mini-cards thirteen"));
    wrap.append(line);
    if (aside && aside.length) wrap.append(setAside(aside, position));
    return wrap;
  }
  if (rows) {
    ROWS.forEach((r) => {
      const line = el("div", "mini-row");
      line.dataset.row = r;
      const shown = rows[r];
      let cards;
      // A revealed row reads as the player's own rows do: a straight low to high (RULES.md §6).
      if (shown) cards = smallCards(rowDisplayOrder(shown.cards, shown), shown.jokers);
      else {
        cards = el("div", "mini-cards");
        for (let i = 0; i < ROW_SIZE[r]; i++) cards.append(C.cardBack({ small: true }));
      }
      line.append(cards);
      if (shown) {
        const label = el("div", "mini-label");
        label.append(el("span", "cat", shown.category ? categoryName(shown.category) : ""));
        // Against me, head to head, the row's water for me; otherwise the seat's own net.
        const mine = versusFor(view, state.me, position, r);
        const water = mine !== null ? mine : shown.water;
        if (water !== null && water !== undefined) {
          const node = el("span", "water " + (water > 0 ? "plus" : water < 0 ? "minus" : ""), signed(water));
          if (mine !== null) {
            node.classList.add("for-me");
            node.title = fmt(_("Your water against %(name)s in this row"), { name: nameOf(position) });
          }
          label.append(node);
        }
        line.append(label);
      }
      wrap.append(line);
    });
    if (aside && aside.length) wrap.append(setAside(aside, position));
    const total = ROWS.map((r) => versusFor(view, state.me, position, r));
    if (total.every((w) => w !== null)) {
      const sum = total.reduce((x, y) => x + y, 0);
      const line = el("div", "versus-total " + (sum > 0 ? "plus" : sum < 0 ? "minus" : ""));
      line.setAttribute("data-testid", "versus-total");
      line.dataset.position = position;
      line.textContent = fmt(_("You vs %(name)s: %(water)s"), { name: nameOf(position), water: signed(sum) });
      wrap.append(line);
    }
    return wrap;
  }
  if (seat.in_round && ["dealing", "special_choice", "arranging", "comparing"].includes(state.table.phase)) {
    const backs = el("div", "backs");
    backs.dataset.position = position;
    const count = dealtTo(state, position, ctx.dealElapsed());
    for (let i = 0; i < count; i++) backs.append(C.cardBack({ small: true }));
    wrap.append(backs);
  }
  return wrap;
}

// The special hand I declared: shown in my seat, since I do not arrange (with spare cards,
// the 13 it plays and the ones it sets aside).
function mySpecial(ctx) {
  const you = ctx.state.you;
  const wrap = el("div", "seat-cards");
  const water = specialWater(ctx.state, you.special);
  wrap.append(el("div", "special-tag", ctx.words.specialName(you.special) + (water === null ? "" : " · " + water)));
  const aside = Array.isArray(you.special_unused) ? you.special_unused : [];
  const played = you.hand.filter((c) => !aside.includes(c));
  wrap.append(smallCards(C.sortByRank(played), null, "mini-cards thirteen"));
  if (aside.length) wrap.append(setAside(aside, ctx.state.me));
  return wrap;
}

// A hue (0–359) from a name: each player's avatar its own colour, the same on every screen.
function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

// What the comparison's guns left on a seat, once their effect has played and until the next
// round: a stamp "Gunned by …" (or run over) on each gunned seat, "Home run!" on the shooter's.
function marks(ctx, view, position) {
  const { nameOf } = ctx.words;
  const out = [];
  view.log.forEach((line) => {
    if (line.kind === "gun" && line.target === position) {
      const text = line.run_over ? _("Run over by %(name)s") : _("Gunned by %(name)s");
      const mark = el("div", "seat-mark shot", fmt(text, { name: nameOf(line.shooter) }));
      mark.setAttribute("data-testid", "seat-shot");
      mark.dataset.shooter = line.shooter;
      out.push(mark);
    } else if (line.kind === "home-run" && line.shooter === position) {
      const mark = el("div", "seat-mark home-run", _("Home run!"));
      mark.setAttribute("data-testid", "seat-home-run");
      out.push(mark);
    }
  });
  return out;
}

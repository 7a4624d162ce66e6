// The settlement from `settled.result`: each player's water, coins, penalty, table fee and
// total (what the wallet moved: delta − fee), the pair-by-pair breakdown, cuts and the coins
// moved. Ready moves into its dialog while shown.
// With jokers or spare cards each player's hand is shown under its line: the rows (a joker
// with what it stands for) or the special's cards, and the cards set aside, dimmed.
import { ROWS, playedIn, compareAt, spareOf } from "../state.js";
import { C, _, fmt, $, el, number, signed, ROW_NAMES } from "./common.js";
import { setAside } from "./seats.js";

// One player's hand as the comparison revealed it, in small cards.
function handLine(view, position, unused) {
  const box = el("div", "settle-hand");
  const rows = view.rows[position];
  const special = view.specials[position];
  const group = (cards, jokers, title) => {
    const part = el("span", "settle-row");
    part.title = title;
    (cards || []).forEach((c) => {
      const stands = jokers && jokers[c];
      part.append(C.cardElement(c, stands ? { small: true, stands } : { small: true }));
    });
    box.append(part);
  };
  if (special) group(special.cards, special.jokers, "");
  else if (rows) ROWS.forEach((r) => rows[r] && group(rows[r].cards, rows[r].jokers, ROW_NAMES[r]));
  const aside = Array.isArray(unused) ? unused : view.unused[position];
  if (aside && aside.length) box.append(setAside(aside, position));
  return box;
}

// A settlement transfer's kind (games/rules/settlement.py) in words.
const TRANSFER_KINDS = { settlement: _("settlement"), cover: _("escaper covers a loss") };

// ctx.ui.settlementSeen: the round whose settlement the player has seen; ctx.readOnly: a
// replay's page (no Ready, no dialog to close).
export function renderSettlement(ctx) {
  const state = ctx.state;
  const table = state.table;
  const ME = state.me;
  const { nameOf, specialName } = ctx.words;
  const overlay = $("settlement-overlay");
  const result = table.result;
  // Read-only (a replay), the settlement is shown once the round has one, and stays.
  const show = ctx.readOnly
    ? Boolean(result)
    : (playedIn(result, state.playerId) || (ctx.cfg.spectator && Boolean(result))) &&
      ctx.ui.settlementSeen < table.round_no &&
      ["settled", "waiting"].includes(table.phase);
  overlay.hidden = !show;
  const readyBox = $("ready-box"); // none on a read-only page
  const home = $("center");
  const inDialog = overlay.querySelector(".dialog-actions");
  if (readyBox && show && readyBox.parentNode !== inDialog) inDialog.prepend(readyBox);
  if (readyBox && !show && readyBox.parentNode !== home) home.insertBefore(readyBox, $("compare-panel"));
  if (!show) return;
  renderDetails(ctx);
  // The review box belongs to one round: a new settlement starts without it.
  const reviewBox = $("review-box"); // none on a replay opened by staff
  if (reviewBox && reviewBox.dataset.round !== String(table.round_no)) {
    reviewBox.hidden = true;
    reviewBox.textContent = "";
    delete reviewBox.dataset.round;
  }
  const body = $("settlement-body");
  const names = state.names;
  if (body.dataset.round === String(table.round_no) && body.dataset.names === JSON.stringify(names)) return;
  body.dataset.round = String(table.round_no);
  body.dataset.names = JSON.stringify(names);
  body.textContent = "";
  const byId = {};
  (result.players || []).forEach((p) => (byId[p.id] = p.position));
  const roundNames = Object.assign({}, state.roundNames);
  (result.players || []).forEach((p) => {
    if (names[p.position]) roundNames[p.id] = names[p.position];
  });
  ctx.rememberRoundNames(roundNames);
  const who = (id) => roundNames[id] || nameOf(byId[id]);

  const config = table.config || {};
  const showHands = Boolean(spareOf(config) || config.jokers);
  const view = showHands ? compareAt(state, Infinity) : null;
  const players = el("table", "result-table");
  const head = el("tr");
  // The Penalty column only when someone paid one (the panel is narrow beside the table).
  const penalties = (result.players || []).some((p) => p.penalty);
  // Likewise the Table fee column (the house's share of a winner's winnings).
  const fees = (result.players || []).some((p) => p.fee);
  const columns = [_("Player"), _("Water"), _("Coins")].concat(
    penalties ? [_("Penalty")] : [],
    fees ? [_("Table fee")] : [],
    [_("Total")],
  );
  columns.forEach((t) => head.append(el("th", "", t)));
  players.append(head);
  (result.players || [])
    .slice()
    .sort((a, b) => b.delta - a.delta)
    .forEach((p) => {
      const tr = el("tr", p.id === state.playerId ? "me" : "");
      const nameCell = el("td", "", who(p.id));
      if (p.special) nameCell.append(el("span", "special-tag", specialName(p.special)));
      if (p.escaped) nameCell.append(el("span", "badge escaped", _("Escaped")));
      tr.append(nameCell);
      tr.append(el("td", "number", signed(p.water)));
      tr.append(el("td", "number", signed(p.coins)));
      if (penalties) tr.append(el("td", "number", p.penalty ? "-" + number(p.penalty) : "—"));
      if (fees) {
        const fee = el("td", "number", p.fee ? "-" + number(p.fee) : "—");
        fee.setAttribute("data-testid", "settlement-fee");
        fee.dataset.position = p.position;
        fee.dataset.fee = String(p.fee || 0);
        tr.append(fee);
      }
      // The total is what the wallet moved; data-delta stays the round's delta.
      const net = p.delta - (p.fee || 0);
      const total = el("td", "number delta " + (net >= 0 ? "plus" : "minus"), signed(net));
      total.setAttribute("data-testid", "settlement-delta");
      total.dataset.position = p.position;
      total.dataset.delta = String(p.delta);
      total.dataset.net = String(net);
      tr.append(total);
      players.append(tr);
      if (showHands) {
        const line = el("tr", "hand-line" + (p.id === state.playerId ? " me" : ""));
        const cell = el("td");
        cell.colSpan = columns.length;
        cell.append(handLine(view, p.position, p.unused));
        line.append(cell);
        players.append(line);
      }
    });
  body.append(players);
  if (fees) {
    body.append(el("p", "fee-line", fmt(_("Table fee: %(percent)s of the winnings, to the house."), { percent: result.fee_percent + "%" })));
  }

  if (result.home_run !== null && result.home_run !== undefined) {
    body.append(el("p", "home-run-line", fmt(_("%(name)s hit a home run (全垒打)!"), { name: who(result.home_run) })));
  }

  const pairs = el("div", "pairs");
  pairs.append(el("h3", "", _("Pair by pair")));
  (result.pairs || []).forEach((pair) => {
    // From my side when I am in the pair.
    const flip = byId[pair.b] === ME;
    const a = flip ? pair.b : pair.a;
    const b = flip ? pair.a : pair.b;
    const sign = flip ? -1 : 1;
    const box = el("div", "pair");
    const title = el("div", "pair-title");
    title.append(el("strong", "", fmt(_("%(a)s vs %(b)s"), { a: who(a), b: who(b) })));
    const total = sign * pair.water;
    title.append(el("span", "water " + (total >= 0 ? "plus" : "minus"), fmt(_("%(water)s water"), { water: signed(total) })));
    box.append(title);
    const parts = el("div", "pair-parts");
    if (pair.rows) {
      ROWS.forEach((r, k) => {
        const v = sign * pair.rows[k];
        const mark = v > 0 ? _("won") : v < 0 ? _("lost") : _("tie");
        parts.append(el("span", "part row-" + (v > 0 ? "won" : v < 0 ? "lost" : "tie"), ROW_NAMES[r] + " " + mark));
      });
    }
    const item = (label, value) => {
      if (value) parts.append(el("span", "part", label + " " + signed(sign * value)));
    };
    item(_("Rows"), pair.row_water);
    item(_("Bonus"), pair.bonus_water);
    if (pair.gun) {
      const label =
        pair.gun === "home_run"
          ? _("Home run 全垒打")
          : pair.rows && pair.rows.includes(0)
            ? _("Run-over 辗过")
            : _("Gun 打枪");
      parts.append(el("span", "part gun", label + " " + who(pair.shooter) + " " + signed(sign * pair.gun_water)));
    }
    item(_("Special"), pair.special_water);
    box.append(parts);
    pairs.append(box);
  });
  body.append(pairs);

  if ((result.cuts || []).length) {
    const cuts = el("div", "cuts");
    cuts.append(el("h3", "", _("Could not cover the loss")));
    result.cuts.forEach((c) => {
      cuts.append(
        el("p", "", fmt(_("%(from)s owed %(to)s %(owed)s coins and paid %(paid)s."), {
          from: who(c.from),
          to: who(c.to),
          owed: number(c.owed),
          paid: number(c.paid),
        })),
      );
    });
    body.append(cuts);
  }
  if ((result.transfers || []).length) {
    const moves = el("details", "transfers");
    moves.append(el("summary", "", _("Coins moved")));
    result.transfers.forEach((t) => {
      const to = t.to === "house" || byId[t.to] === undefined ? _("the house") : who(t.to);
      const kind = TRANSFER_KINDS[t.kind] || "";
      moves.append(el("p", "", who(t.from) + " → " + to + ": " + number(t.coins) + (kind ? " (" + kind + ")" : "")));
    });
    (result.players || []).forEach((p) => {
      if (p.fee) moves.append(el("p", "", who(p.id) + " → " + _("the house") + ": " + number(p.fee) + " (" + _("table fee") + ")"));
    });
    body.append(moves);
  }
}

// On a phone the settlement opens folded under my rows (my line, Ready, the actions), so it
// covers nothing; Details unfolds the whole breakdown (ctx.ui.settlementDetails, kept for the
// page's life). Wider screens show it whole beside the table, and the button is not shown.
function renderDetails(ctx) {
  const button = $("settlement-details"); // none on a replay
  if (!button) return;
  if (!button.dataset.wired) {
    button.dataset.wired = "true";
    button.addEventListener("click", () => {
      ctx.ui.settlementDetails = !ctx.ui.settlementDetails;
      renderDetails(ctx);
    });
  }
  const open = Boolean(ctx.ui.settlementDetails);
  $("settlement-panel").classList.toggle("details", open);
  button.setAttribute("aria-expanded", String(open));
  button.textContent = open ? _("Hide details") : _("Details");
}

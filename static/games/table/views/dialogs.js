// Dialogs: the special hand question, the one question before leaving mid-round (any link,
// form or Leave asks in the page; closing the tab or going back, the browser asks), and the
// banner when the table is closed for good.
import { escapeRisk, penaltyCoins, specialWater, choosing, inRound } from "../state.js";
import { _, fmt, $, number } from "./common.js";
import { setAside } from "./seats.js";

export function renderSpecial(ctx) {
  const state = ctx.state;
  const overlay = $("special-overlay");
  const show = !state.closed && choosing(state) && inRound(state);
  overlay.hidden = !show;
  if (!show) return;
  $("special-name").textContent = ctx.words.specialName(state.you.special);
  const water = specialWater(state, state.you.special);
  $("special-water").textContent =
    water === null ? "" : fmt(_("Worth %(water)s water from each opponent"), { water });
  renderAdvice(state.you.advice);
  // With spare cards: the 3 cards the special sets aside.
  const aside = $("special-aside");
  const cards = state.you.special_unused;
  aside.hidden = !Array.isArray(cards) || !cards.length;
  aside.textContent = "";
  if (!aside.hidden) aside.append(setAside(cards, state.me));
}

// The advice (RULES.md §5.1): the special's water against the best arrangement's expected
// water for these cards and this round's opponents, and which answer it recommends.
function renderAdvice(advice) {
  const box = $("special-advice");
  const yes = $("special-yes");
  const no = $("special-no");
  box.hidden = !advice;
  box.textContent = "";
  yes.classList.remove("recommended");
  no.classList.remove("recommended");
  delete yes.dataset.recommended;
  delete no.dataset.recommended;
  if (!advice) return;
  const special = advice.recommend === "special";
  const line = (testid, text, chosen) => {
    const p = document.createElement("p");
    p.className = "advice-line" + (chosen ? " chosen" : "");
    p.dataset.testid = testid;
    p.textContent = text;
    box.append(p);
  };
  const opponents = advice.opponents;
  line(
    "advice-special",
    fmt(_("Declare it: %(water)s water for sure (%(each)s from each of %(n)s opponents)"), {
      water: signed(advice.special_water),
      each: opponents ? signed(advice.special_water / opponents) : "0",
      n: opponents,
    }),
    special,
  );
  line(
    "advice-arrange",
    fmt(_("Arrange it: about %(water)s water expected with the best arrangement"), {
      water: signed(advice.arrange_water),
    }),
    !special,
  );
  const verdict = document.createElement("p");
  verdict.className = "advice-verdict";
  verdict.dataset.testid = "advice-verdict";
  verdict.textContent = special
    ? _("Recommended: play the special hand.")
    : _("Recommended: arrange — it is expected to win more.");
  box.append(verdict);
  const button = special ? yes : no;
  button.classList.add("recommended");
  button.dataset.recommended = "true";
}

function signed(value) {
  const n = Math.round(Number(value) * 100) / 100;
  return (n > 0 ? "+" : "") + n.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

export function setUpSpecial(ctx) {
  $("special-yes").addEventListener("click", () => ctx.act("choose_special", { play_special: true }));
  $("special-no").addEventListener("click", () => ctx.act("choose_special", { play_special: false }));
}

export function leaveQuestion(state) {
  const config = state.table.config || {};
  const text = config.escape_covers_losses
    ? _("A round is being played. Leaving now is an escape (逃跑): your hand is played for you, you pay the other losers' losses and a penalty of %(coins)s coins.")
    : _("A round is being played. Leaving now is an escape (逃跑): your hand is played for you and you pay a penalty of %(coins)s coins.");
  return fmt(text, { coins: number(penaltyCoins(state)) });
}

// The in-page question; `then` runs if the player confirms.
let onLeaveConfirmed = null;
// The player answered "Leave" to the in-page question: it is the only question, so the
// browser's own ("Leave site?") is not asked after it. Paths the page cannot ask on (closing
// the tab, the back button, an address typed) get the browser's question alone; nothing is
// sent before it is answered, so "Stay" there costs nothing.
let leaveAnswered = false;
export function askLeave(state, then) {
  onLeaveConfirmed = then;
  $("leave-question").textContent = leaveQuestion(state);
  $("leave-confirm").textContent = fmt(_("Leave and pay %(coins)s"), { coins: number(penaltyCoins(state)) });
  $("leave-overlay").hidden = false;
  $("leave-stay").focus();
}

function closeLeaveDialog() {
  $("leave-overlay").hidden = true;
  onLeaveConfirmed = null;
}

// ctx: {root, state, act(type), onLeaveButton()}
export function setUpLeave(ctx) {
  // Any link or form that would take the player away mid-round asks first.
  document.addEventListener(
    "click",
    (event) => {
      const link = event.target.closest && event.target.closest("a[href]");
      if (!link || !escapeRisk(ctx.state) || event.defaultPrevented) return;
      if (link.target === "_blank" || link.getAttribute("href").startsWith("#")) return;
      event.preventDefault();
      askLeave(ctx.state, () => {
        ctx.act("leave");
        window.location.href = link.href;
      });
    },
    true,
  );
  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target;
      if (!escapeRisk(ctx.state) || ctx.root.contains(form)) return;
      event.preventDefault();
      askLeave(ctx.state, () => {
        ctx.act("leave");
        form.submit();
      });
    },
    true,
  );
  window.addEventListener("beforeunload", (event) => {
    if (leaveAnswered || !escapeRisk(ctx.state)) return;
    event.preventDefault();
    event.returnValue = leaveQuestion(ctx.state); // browsers show their own words; ours are in the page
  });
  const leaveButton = $("leave-button"); // a spectator has a link instead
  if (leaveButton) leaveButton.addEventListener("click", ctx.onLeaveButton);
  $("leave-confirm").addEventListener("click", () => {
    const then = onLeaveConfirmed;
    leaveAnswered = true;
    closeLeaveDialog();
    if (then) then();
  });
  $("leave-stay").addEventListener("click", closeLeaveDialog);
  $("leave-overlay").addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeLeaveDialog();
  });
}

// The table is closed for good: why, and the way back to the lobby (`href`, if not the
// template's link).
export function showClosed(why, href) {
  const banner = $("closed-banner");
  if (href) banner.querySelector("a").href = href;
  banner.querySelector(".why").textContent = why;
  banner.hidden = false;
}

export function setConnection(root, state, text) {
  const node = root.querySelector("[data-testid=connection-state]");
  node.dataset.state = state;
  node.textContent =
    text || { live: _("Live"), reconnecting: _("Reconnecting…"), closed: _("Disconnected") }[state];
}

// The center of the felt: the status line and the comparison's log; the screen-wide effects
// (gun, run-over, home run) and the sounds.
import { PLAY_PHASES, mySeat, submitted, choosing, spareOf, handSize, lastRoundPlayed } from "../state.js";
import { _, fmt, $, el, signed, ROW_NAMES } from "./common.js";

// One structured log line of compareAt() in words.
export function logText(line, words) {
  const { nameOf, categoryName, specialName } = words;
  if (line.kind === "reveal") {
    return fmt(_("%(row)s: %(name)s shows %(category)s"), {
      row: ROW_NAMES[line.row],
      name: nameOf(line.position),
      category: categoryName(line.category),
    });
  }
  if (line.kind === "row") {
    const parts = line.water.map((w) => nameOf(w.position) + " " + signed(w.water));
    return ROW_NAMES[line.row] + " · " + parts.join(" · ");
  }
  if (line.kind === "gun") {
    const text = line.home_run
      ? _("%(shooter)s's home run takes %(target)s (全垒打): +%(water)s water")
      : line.run_over
        ? _("%(shooter)s runs over %(target)s (辗过): +%(water)s water")
        : _("%(shooter)s shoots %(target)s (打枪): +%(water)s water");
    return fmt(text, { shooter: nameOf(line.shooter), target: nameOf(line.target), water: line.water });
  }
  if (line.kind === "home-run") {
    return fmt(_("%(shooter)s hits a home run (全垒打)!"), { shooter: nameOf(line.shooter) });
  }
  if (line.kind === "special") {
    return fmt(_("%(name)s plays the special hand %(special)s: %(water)s water"), {
      name: nameOf(line.position),
      special: specialName(line.special),
      water: line.water,
    });
  }
  return "";
}

export function renderCenter(ctx, view) {
  const state = ctx.state;
  const table = state.table;
  const you = state.you;
  const closed = state.closed;
  const seat = mySeat(state);
  const lobbyPhase = ["waiting", "settled"].includes(table.phase);
  // A duplicate match's table (games.live.duplicate): it deals and reveals with the match's others.
  const match = table.match;
  const matchOver = Boolean(lastRoundPlayed(state));
  const readyBox = $("ready-box"); // none on a read-only page (a replay)
  if (readyBox) readyBox.hidden = closed || !lobbyPhase || !seat || seat.ready || matchOver;
  let status = "";
  const others = Object.values(table.seats).filter((s) => s.position !== state.me);
  if (closed || ctx.readOnly) status = "";
  else if (ctx.cfg.spectator) status = _("You are watching this table.");
  else if (lobbyPhase) {
    if (!seat) status = "";
    else if (matchOver && match) status = _("The match is over: all its deals are played. See the results.");
    else if (matchOver) status = _("The series is over: all its rounds are played. See the final scoreboard.");
    else if (!seat.ready) status = _("Press Ready to play the next round.");
    else if (match) status = _("Waiting for every table of the match to be full and ready…");
    else if (others.length === 0) status = _("Waiting for another player to sit down…");
    else status = _("Waiting for the others to be ready…");
  } else if (table.phase === "dealing") status = _("Dealing…");
  else if (PLAY_PHASES.includes(table.phase)) {
    if (!seat || !seat.in_round) status = _("A round is being played. You join the next one.");
    else if (match && match.held) {
      status = _("Every hand at this table is in. Waiting for the other tables: the deal is revealed at every table together.");
    } else if (you.special_choice === true) status = _("You play your special hand. Waiting for the others…");
    else if (submitted(state)) status = _("Submitted. Waiting for the others…");
    else if (choosing(state)) status = _("You hold a special hand!");
    else if (spareOf(table.config)) {
      status = fmt(_("Keep 13 of your %(n)s cards (swap with the set-aside ones) and arrange them: front 3, middle 5, back 5."), {
        n: handSize(table.config),
      });
    } else status = _("Arrange your 13 cards: front 3, middle 5, back 5.");
  } else if (table.phase === "comparing") status = _("Comparing hands…");
  $("status-line").textContent = status;
  const panel = $("compare-panel");
  panel.hidden = view.log.length === 0 && !Object.keys(view.rows).length;
  const log = $("compare-log");
  log.textContent = "";
  view.log.forEach((line) => log.append(el("li", "log-" + line.kind, logText(line, ctx.words))));
  log.scrollTop = log.scrollHeight;
}

// A screen-wide effect (effectOf() of state.js) over everything, for its whole time: the
// comparison's script leaves it `fx.ms` before the next event (1.5 reveal intervals for a gun,
// 3 for a home run), and its animation (table-compare.css) is stretched over exactly that.
export function playEffect(fx, words) {
  if (fx.type === "home_run") {
    const line = logText({ kind: "home-run", shooter: fx.shooter }, words);
    play("home-run-animation", line, fx.ms);
    sound("home_run");
    return;
  }
  const line = logText(
    { kind: "gun", shooter: fx.shooter, target: fx.target, water: fx.water, run_over: fx.type === "run_over" },
    words,
  );
  play("gun-animation", line, fx.ms, fx.type === "run_over" ? _("Run-over!") : _("Gun!"));
  sound("gun");
}

const hideTimers = {};

// Every effect playing ends now (a settlement or a new round has overtaken the comparison).
export function stopEffects() {
  Object.keys(hideTimers).forEach((id) => {
    clearTimeout(hideTimers[id]);
    delete hideTimers[id];
    const node = $(id);
    if (node) node.hidden = true;
  });
}
function play(id, line, ms, title) {
  const node = $(id);
  node.querySelector(".fx-line").textContent = line;
  if (title) node.querySelector(".fx-title").textContent = title;
  node.style.setProperty("--fx-ms", (ms || 1800) + "ms");
  node.hidden = false;
  node.classList.remove("play");
  void node.offsetWidth; // restart the animation
  node.classList.add("play");
  clearTimeout(hideTimers[id]);
  hideTimers[id] = setTimeout(() => (node.hidden = true), ms || 1800);
}

// ---- sound: small vendored files (scripts/make-sounds.py), a mute toggle kept per browser --
const SOUND_KEY = "shisanshui.sound";
const sounds = {};
let soundFiles = {};
let soundOn = true;

export function setUpSound(cfg) {
  soundFiles = cfg.sounds || {};
  soundOn = localStorage.getItem(SOUND_KEY) !== "off";
  $("sound-toggle").addEventListener("click", () => {
    soundOn = !soundOn;
    localStorage.setItem(SOUND_KEY, soundOn ? "on" : "off");
    renderSoundToggle();
  });
  renderSoundToggle();
}

function renderSoundToggle() {
  const button = $("sound-toggle");
  button.setAttribute("aria-pressed", soundOn ? "true" : "false");
  button.title = soundOn ? _("Sound on: click to mute") : _("Sound off: click to unmute");
}

export function sound(name) {
  if (!soundOn || !soundFiles[name]) return;
  try {
    sounds[name] = sounds[name] || new Audio(soundFiles[name]);
    const audio = sounds[name];
    audio.currentTime = 0;
    const played = audio.play();
    if (played && played.catch) played.catch(() => {}); // no user gesture yet: stay silent
  } catch (e) {
    /* no audio here */
  }
}

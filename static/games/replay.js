// The replay page (games/templates/games/replay.html): a settled round drawn by the table's own
// reducer (table/state.js) and views (table/views/*.js), read-only — no socket, no actions, no
// timers. Its data (json_script "replay-data", games.history.replay) is a spectator's snapshot
// of the table before the round and the round's public events; this file is the step control:
// it applies the events up to the end of a step — the deal, the arranging, each row of the
// comparison, the guns, the special hands, the settlement — and lets the views draw the state.
// Previous / next, play / pause, the step track and the keys (← → Home End) move through them.
import * as S from "./table/state.js";
import { C, _, fmt, $, el, makeWords } from "./table/views/common.js";
import { renderSeats } from "./table/views/seats.js";
import { renderCenter } from "./table/views/compare.js";
import { renderSettlement } from "./table/views/settlement.js";

const PLAY_MS = 2600;
const STEP_NAMES = {
  deal: _("Deal"),
  arrange: _("Arrange"),
  front: _("Front"),
  middle: _("Middle"),
  back: _("Back"),
  guns: _("Guns"),
  specials: _("Specials"),
  settle: _("Settlement"),
};
const STEP_TITLES = {
  deal: _("Deal 发牌"),
  arrange: _("Arrange 摆牌"),
  front: _("Front row 前墩"),
  middle: _("Middle row 中墩"),
  back: _("Back row 后墩"),
  guns: _("Guns 打枪"),
  specials: _("Special hands 特殊牌型"),
  settle: _("Settlement 结算"),
};
// An event that opens the step of the event after it (the comparison's phase opens its first
// row, or its guns or specials when no hand was arranged).
const OPENS_NEXT = "next";

// The step an event begins, OPENS_NEXT, or null: it belongs to the step under way.
function stepOf(event) {
  const p = event.payload || {};
  switch (event.type) {
    case "deal":
      return "deal";
    case "phase":
      if (S.PLAY_PHASES.includes(p.phase)) return "arrange";
      return p.phase === "comparing" ? OPENS_NEXT : null;
    case "reveal":
    case "row_result":
      return p.row;
    case "gun":
    case "home_run":
      return "guns";
    case "reveal_special":
      return "specials";
    case "settled":
      return "settle";
    default:
      return null;
  }
}

// The steps of a round's events: [{kind, start, end}], events[start..end) applied by each
// (the first starts at the round's start, the last ends with the events).
function replaySteps(events) {
  const steps = [];
  let opened = null;
  events.forEach((event, i) => {
    const kind = stepOf(event);
    if (kind === OPENS_NEXT) {
      opened = opened === null ? i : opened;
      return;
    }
    if (!kind || (steps.length && steps[steps.length - 1].kind === kind)) return;
    steps.push({ kind, start: steps.length ? (opened === null ? i : opened) : 0 });
    opened = null;
  });
  steps.forEach((step, k) => (step.end = k + 1 < steps.length ? steps[k + 1].start : events.length));
  return steps;
}

function start() {
  const root = $("replay");
  const source = $("replay-data");
  if (!root || !source || !C) return;
  const data = JSON.parse(source.textContent);
  // What the table page's views read of its config: a spectator's page, or the viewer's seat.
  const cfg = {
    position: data.viewer === null ? -1 : data.viewer,
    player_id: data.player_id,
    username: null,
    seats: data.capacity,
    base_score: data.snapshot.config.base_score,
    names: data.names,
    specials: data.specials,
    categories: data.categories,
    spectator: data.viewer === null,
  };
  const base = S.applySnapshot(S.initialState(cfg), data.snapshot, C.evaluate);
  const steps = replaySteps(data.events);
  const table = $("replay-table");
  let state = base;
  let current = 0;
  let timer = null;

  const ctx = {
    cfg,
    root: table,
    readOnly: true,
    ui: { settlementSeen: 0 },
    words: makeWords(cfg, () => state),
    get state() {
      return state;
    },
    dealElapsed: () => Infinity, // every card of the deal has landed
    rememberRoundNames: (roundNames) => (state = Object.assign({}, state, { roundNames })),
  };

  function renderTable() {
    state = S.applyEvents(base, data.events.slice(0, steps.length ? steps[current].end : 0));
    table.dataset.phase = state.table.phase;
    const shown = S.compareAt(state, Infinity);
    renderSeats(ctx, shown);
    renderCenter(ctx, shown);
    renderSettlement(ctx);
  }

  // ---- the controls --------------------------------------------------------------------------
  function renderTrack() {
    const track = $("replay-track");
    if (!track.childNodes.length) {
      steps.forEach((step, i) => {
        const button = el("button", "rp-track-step", STEP_NAMES[step.kind]);
        button.type = "button";
        button.dataset.index = String(i);
        button.addEventListener("click", () => {
          pause();
          go(i);
        });
        const li = el("li");
        li.append(button);
        track.append(li);
      });
    }
    track.querySelectorAll("button").forEach((button, i) => {
      button.classList.toggle("done", i < current);
      if (i === current) button.setAttribute("aria-current", "step");
      else button.removeAttribute("aria-current");
    });
  }

  function render() {
    const step = steps[current];
    const kind = S.ROWS.includes(step.kind) ? "row" : step.kind;
    root.dataset.step = String(current);
    root.dataset.kind = kind;
    const indicator = $("replay-step");
    indicator.dataset.step = String(current + 1);
    indicator.dataset.steps = String(steps.length);
    indicator.dataset.kind = kind;
    indicator.textContent = fmt(_("Step %(n)s of %(total)s · %(name)s"), {
      n: current + 1,
      total: steps.length,
      name: STEP_NAMES[step.kind],
    });
    $("replay-title").textContent = STEP_TITLES[step.kind];
    $("replay-prev").disabled = current === 0;
    $("replay-next").disabled = current === steps.length - 1;
    renderTrack();
    renderTable();
  }

  function go(index) {
    const next = Math.min(steps.length - 1, Math.max(0, index));
    if (next === current) return;
    current = next;
    render();
  }

  function setPlaying(playing) {
    const button = $("replay-play");
    button.setAttribute("aria-pressed", playing ? "true" : "false");
    button.textContent = playing ? "❚❚ " + _("Pause") : "▶ " + _("Play");
    root.dataset.playing = playing ? "true" : "false";
  }

  function pause() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    setPlaying(false);
  }

  function play() {
    if (current === steps.length - 1) go(0);
    timer = setInterval(() => {
      go(current + 1);
      if (current >= steps.length - 1) pause();
    }, PLAY_MS);
    setPlaying(true);
  }

  // A player's review of its own hand: fetched on demand from the games API.
  const reviewButton = $("review-button");
  if (reviewButton && window.ShisanshuiReview) {
    reviewButton.addEventListener("click", () => {
      const box = $("review-box");
      box.dataset.round = String(data.round.number); // kept by the settlement's view
      window.ShisanshuiReview.load(`/api/games/rounds/${data.round.id}/review/`, box, {
        specialName: ctx.words.specialName,
      });
    });
  }

  root.hidden = false;
  if (!steps.length) {
    // No stored event of the round: its table, its players, no step to take.
    $("replay-controls").hidden = true;
    renderTable();
    return;
  }
  $("replay-prev").addEventListener("click", () => {
    pause();
    go(current - 1);
  });
  $("replay-next").addEventListener("click", () => {
    pause();
    go(current + 1);
  });
  $("replay-play").addEventListener("click", () => (timer === null ? play() : pause()));
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const keys = {
      ArrowLeft: () => go(current - 1),
      ArrowRight: () => go(current + 1),
      Home: () => go(0),
      End: () => go(steps.length - 1),
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    pause();
    action();
  });
  setPlaying(false);
  render();
}

start();

// The replay page (games/templates/games/replay.html): a settled round drawn as the table
// showed it, one step at a time — the deal, the arrangements, the comparison row by row, the
// guns (打枪) / run-overs (辗过) / home run (全垒打), the special hands and the settlement.
// The data is games.history.replay.round_replay_data (json_script "replay-data"); cards are drawn by
// static/games/cards.js like the table's. Previous / next, play / pause, the step track and
// the arrow keys move through the steps; strings come from /jsi18n/ (gettext).
(function () {
  "use strict";

  const C = window.ShisanshuiCards;
  const root = document.getElementById("replay");
  const source = document.getElementById("replay-data");
  if (!root || !C || !source) return;

  const data = JSON.parse(source.textContent);
  const gettext = window.gettext || ((s) => s);
  const interpolate =
    window.interpolate || ((fmt, obj) => fmt.replace(/%\((\w+)\)s/g, (_, k) => String(obj[k])));
  const _ = gettext;
  const fmt = (text, params) => interpolate(text, params, true);
  const lang = document.documentElement.lang || undefined;
  const $ = (id) => document.getElementById(id);

  const PLAY_MS = 2600;
  const ROWS = ["front", "middle", "back"];
  const ROW_NAMES = { front: _("Front"), middle: _("Middle"), back: _("Back") };
  const ROW_TITLES = {
    front: _("Front row 前墩"),
    middle: _("Middle row 中墩"),
    back: _("Back row 后墩"),
  };
  const STEP_NAMES = {
    deal: _("Deal"),
    arrange: _("Arrange"),
    guns: _("Guns"),
    specials: _("Specials"),
    settle: _("Settlement"),
  };
  const STEP_TITLES = {
    deal: _("Deal 发牌"),
    arrange: _("Arrange 摆牌"),
    guns: _("Guns 打枪"),
    specials: _("Special hands 特殊牌型"),
    settle: _("Settlement 结算"),
  };
  const AUTO_REASONS = {
    timeout: _("time ran out"),
    hosted: _("away, hosted 托管"),
    escaped: _("escaped 逃跑"),
  };

  const steps = data.steps;
  const players = data.players;
  const byPosition = {};
  players.forEach((p) => (byPosition[p.position] = p));
  let current = 0;
  let timer = null;

  // ---- small helpers ------------------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function number(value) {
    return Number(value).toLocaleString(lang);
  }

  function signed(value) {
    return (value > 0 ? "+" : "") + number(value);
  }

  function sign(value) {
    return value > 0 ? "plus" : value < 0 ? "minus" : "even";
  }

  function who(position) {
    const p = byPosition[position];
    return p ? p.name : _("the house");
  }

  // Category and special names in the page's language only, as the table shows them.
  const CHINESE = (lang || "").toLowerCase().startsWith("zh");
  function localName(info, id) {
    if (!info) return id;
    return CHINESE ? info.zh : info.en;
  }

  function categoryName(id) {
    return localName(data.names.categories[id], id);
  }

  function specialName(id) {
    return localName(data.names.specials[id], id);
  }

  function stepName(step) {
    return step.kind === "row" ? ROW_NAMES[step.row] : STEP_NAMES[step.kind];
  }

  function stepTitle(step) {
    return step.kind === "row" ? ROW_TITLES[step.row] : STEP_TITLES[step.kind];
  }

  // Cards as the table draws them (copies and jokers included, RULES.md §12); `jokers` says
  // what each joker of a row stood for ({"RJ": "AS"}).
  function cardLine(cards, className, jokers) {
    const line = el("div", "rp-cards " + (className || ""));
    if (className === "hand" && cards.length > 13) line.classList.add("spare");
    cards.forEach((c) => line.append(C.cardElement(c, { stands: (jokers || {})[c] })));
    return line;
  }

  // ---- what the steps so far say ------------------------------------------------------------

  // Each seat's water per row, from the row steps up to `index`.
  function rowWater(index) {
    const out = {};
    steps.slice(0, index + 1).forEach((step) => {
      if (step.kind !== "row") return;
      step.water.forEach((w) => {
        out[w.position] = out[w.position] || {};
        out[w.position][step.row] = w.water;
      });
    });
    return out;
  }

  function reached(kind, index) {
    return steps.slice(0, index + 1).some((s) => s.kind === kind);
  }

  function gunsStep() {
    return steps.find((s) => s.kind === "guns");
  }

  function specialsStep() {
    return steps.find((s) => s.kind === "specials");
  }

  // ---- the seats ----------------------------------------------------------------------------

  function renderSeats() {
    const step = steps[current];
    const box = $("replay-seats");
    box.textContent = "";
    const water = rowWater(current);
    const guns = reached("guns", current) ? gunsStep() : null;
    const specials = reached("specials", current) ? specialsStep() : null;
    const settled = step.kind === "settle";
    players.forEach((p) => {
      const seat = el("section", "rp-seat");
      seat.dataset.position = p.position;
      seat.setAttribute("data-testid", "replay-seat");
      if (p.you) seat.dataset.me = "true";
      const head = el("header", "rp-seat-head");
      head.append(el("span", "avatar", (p.name[0] || "?").toUpperCase()));
      const name = el("span", "rp-seat-name", p.name);
      name.title = p.name;
      head.append(name);
      if (p.you) head.append(el("span", "rp-you", _("you")));
      head.append(el("span", "rp-seat-no", fmt(_("Seat %(n)s"), { n: p.position + 1 })));
      if (settled) {
        const delta = el("span", "rp-delta " + sign(p.delta), signed(p.delta));
        delta.setAttribute("data-testid", "replay-delta");
        delta.title = fmt(_("%(water)s water"), { water: signed(p.water) });
        head.append(delta);
      }
      seat.append(head);

      const badges = el("div", "badges");
      const badge = (text, cls) => badges.append(el("span", "badge " + cls, text));
      if (step.kind !== "deal") {
        if (p.auto) badge(fmt(_("Auto-arranged: %(why)s"), { why: AUTO_REASONS[p.auto] || p.auto }), "auto");
        if (p.escaped) badge(_("Escaped 逃跑"), "escaped");
      }
      if (guns) {
        guns.guns.forEach((g) => {
          if (g.shooter === p.position) {
            const label = g.kind === "run_over" ? _("Runs over %(name)s 辗过") : _("Shoots %(name)s 打枪");
            badge(fmt(label, { name: who(g.target) }), "gun");
          }
          if (g.target === p.position) badge(fmt(_("Shot by %(name)s"), { name: who(g.shooter) }), "shot");
        });
        if (guns.home_run === p.position) {
          badge(_("Home run 全垒打"), "home-run");
          seat.classList.add("home-run");
        }
      }
      if (badges.childNodes.length) seat.append(badges);

      if (step.kind === "deal") {
        seat.append(cardLine(p.cards, "hand"));
      } else if (p.special) {
        seat.append(specialBlock(p, specials));
      } else if (p.rows) {
        ROWS.forEach((r) => seat.append(rowBlock(p, r, step, water[p.position] || {})));
        if (p.unused.length) {
          const aside = el("div", "rp-unused");
          aside.append(el("span", "rp-row-name", _("Set aside")));
          aside.append(cardLine(p.unused, "small-line"));
          seat.append(aside);
        }
      }
      box.append(seat);
    });
  }

  function rowBlock(p, r, step, water) {
    const row = p.rows[r];
    const block = el("div", "rp-row");
    block.dataset.row = r;
    if (step.kind === "row") {
      block.classList.add(step.row === r ? "current" : "dim");
    }
    const label = el("div", "rp-row-label");
    label.append(el("span", "rp-row-name", ROW_NAMES[r]));
    label.append(el("span", "rp-category", categoryName(row.category)));
    if (water[r] !== undefined) {
      const w = el("span", "rp-water " + sign(water[r]), signed(water[r]));
      w.title = fmt(_("%(water)s water"), { water: signed(water[r]) });
      label.append(w);
    }
    block.append(label, cardLine(row.cards, "", row.jokers));
    return block;
  }

  function specialBlock(p, specials) {
    const block = el("div", "rp-special");
    const tag = el("div", "special-tag", specialName(p.special));
    if (p.special_water !== null) tag.textContent += " · " + fmt(_("%(water)s water"), { water: p.special_water });
    block.append(tag);
    if (specials) {
      const mine = specials.specials.find((s) => s.position === p.position);
      const total = mine ? mine.against.reduce((sum, a) => sum + a.water, 0) : 0;
      block.append(el("span", "rp-water " + sign(total), signed(total)));
    }
    if (p.split) {
      ROWS.forEach((r) => {
        const line = el("div", "rp-row");
        line.dataset.row = r;
        const label = el("div", "rp-row-label");
        label.append(el("span", "rp-row-name", ROW_NAMES[r]));
        line.append(label, cardLine(p.split[r]));
        block.append(line);
      });
    } else {
      block.append(cardLine(p.cards, "hand"));
    }
    return block;
  }

  // ---- what happens in the step -------------------------------------------------------------

  function renderCaption() {
    const step = steps[current];
    $("replay-title").textContent = stepTitle(step);
    const lines = $("replay-lines");
    lines.textContent = "";
    const line = (text, cls) => lines.append(el("li", cls || "", text));
    if (step.kind === "deal") {
      line(fmt(_("Each player is dealt %(n)s cards."), { n: players.length ? players[0].cards.length : 13 }));
    } else if (step.kind === "arrange") {
      let plain = 0;
      players.forEach((p) => {
        if (p.special) {
          line(fmt(_("%(name)s declares the special hand %(special)s."), { name: who(p.position), special: specialName(p.special) }), "special");
        } else if (p.auto) {
          line(fmt(_("%(name)s was arranged automatically (%(why)s)."), { name: who(p.position), why: AUTO_REASONS[p.auto] || p.auto }), "auto");
        } else {
          plain++;
        }
      });
      if (plain) line(_("Every hand is split into front 3, middle 5 and back 5 cards (back ≥ middle ≥ front)."));
    } else if (step.kind === "row") {
      step.duels.forEach((d) => {
        const row = (pos) => categoryName(byPosition[pos].rows[step.row].category);
        if (d.winner === null) {
          line(fmt(_("%(a)s and %(b)s tie (%(category)s): no water."), { a: who(d.a), b: who(d.b), category: row(d.a) }), "tie");
        } else {
          const text = d.bonus
            ? _("%(winner)s (%(won)s) beats %(loser)s (%(lost)s): %(water)s water, bonus %(bonus)s included.")
            : _("%(winner)s (%(won)s) beats %(loser)s (%(lost)s): %(water)s water.");
          line(fmt(text, { winner: who(d.winner), won: row(d.winner), loser: who(d.loser), lost: row(d.loser), water: d.water, bonus: d.bonus }), "won");
        }
      });
    } else if (step.kind === "guns") {
      if (step.home_run !== null && step.home_run !== undefined) {
        line(fmt(_("%(name)s hit a home run (全垒打)!"), { name: who(step.home_run) }), "home-run");
      }
      step.guns.forEach((g) => {
        let text;
        if (g.home_run && g.kind === "run_over") text = _("%(shooter)s runs over %(target)s in the home run (全垒打; 辗过 counts as a gun): +%(water)s water.");
        else if (g.home_run) text = _("%(shooter)s shoots %(target)s in the home run (全垒打): +%(water)s water.");
        else if (g.kind === "run_over") text = _("%(shooter)s runs over %(target)s (辗过: no row lost, counts as a gun): +%(water)s water.");
        else text = _("%(shooter)s shoots %(target)s (打枪: all three rows won): +%(water)s water.");
        line(fmt(text, { shooter: who(g.shooter), target: who(g.target), water: g.water }), "gun");
      });
    } else if (step.kind === "specials") {
      step.specials.forEach((s) => {
        const parts = s.against.map((a) => fmt(_("%(water)s against %(name)s"), { water: signed(a.water), name: who(a.position) }));
        line(fmt(_("%(name)s plays %(special)s: %(parts)s."), { name: who(s.position), special: specialName(s.special), parts: parts.join(", ") }), "special");
      });
    } else if (step.kind === "settle") {
      line(fmt(_("Base score %(base)s: 1 water = %(base)s coins."), { base: number(data.rules.base_score) }));
      if (data.settlement.home_run !== null && data.settlement.home_run !== undefined) {
        line(fmt(_("%(name)s hit a home run (全垒打)!"), { name: who(data.settlement.home_run) }), "home-run");
      }
    }
    const settle = step.kind === "settle";
    const result = $("replay-result");
    const pairs = $("replay-pairs");
    result.hidden = !settle;
    pairs.hidden = !settle;
    if (settle && !result.childNodes.length) renderResult(result);
    if (settle && !pairs.childNodes.length) renderPairs(pairs);
  }

  // The settlement: each player's water and coins (as the table's dialog).
  function renderResult(box) {
    const table = el("table", "result-table");
    table.setAttribute("data-testid", "replay-result-table");
    const head = el("tr");
    [_("Player"), _("Water"), _("Coins"), _("Penalty"), _("Total")].forEach((t) => head.append(el("th", "", t)));
    table.append(head);
    players
      .slice()
      .sort((a, b) => b.delta - a.delta)
      .forEach((p) => {
        const tr = el("tr", p.you ? "me" : "");
        const name = el("td", "", who(p.position));
        if (p.special) name.append(el("span", "special-tag", specialName(p.special)));
        if (p.escaped) name.append(el("span", "badge escaped", _("Escaped 逃跑")));
        tr.append(name);
        tr.append(el("td", "number", signed(p.water)));
        tr.append(el("td", "number", signed(p.coins)));
        tr.append(el("td", "number", p.penalty ? "-" + number(p.penalty) : "—"));
        tr.append(el("td", "number delta " + sign(p.delta), signed(p.delta)));
        table.append(tr);
      });
    box.append(table);
  }

  // Each pair's breakdown, who could not cover a loss, and the coins moved.
  function renderPairs(box) {
    const s = data.settlement;
    const pairs = el("div", "pairs");
    pairs.append(el("h3", "", _("Pair by pair")));
    s.pairs.forEach((pair) => {
      // From the viewer's side when the viewer is in the pair.
      const flip = pair.b === data.viewer;
      const a = flip ? pair.b : pair.a;
      const b = flip ? pair.a : pair.b;
      const k = flip ? -1 : 1;
      const item = el("div", "pair");
      item.setAttribute("data-testid", "replay-pair");
      const title = el("div", "pair-title");
      title.append(el("strong", "", fmt(_("%(a)s vs %(b)s"), { a: who(a), b: who(b) })));
      title.append(el("span", "water " + sign(k * pair.water), fmt(_("%(water)s water"), { water: signed(k * pair.water) })));
      item.append(title);
      const parts = el("div", "pair-parts");
      if (pair.rows) {
        ROWS.forEach((r, i) => {
          const v = k * pair.rows[i];
          const mark = v > 0 ? _("won") : v < 0 ? _("lost") : _("tie");
          parts.append(el("span", "part row-" + (v > 0 ? "won" : v < 0 ? "lost" : "tie"), ROW_NAMES[r] + " " + mark));
        });
      }
      const part = (label, value) => {
        if (value) parts.append(el("span", "part", label + " " + signed(k * value)));
      };
      part(_("Rows"), pair.row_water);
      part(_("Bonus"), pair.bonus_water);
      if (pair.gun) {
        const label =
          pair.gun === "home_run" ? _("Home run 全垒打") : pair.run_over ? _("Run-over 辗过") : _("Gun 打枪");
        parts.append(el("span", "part gun", label + " " + who(pair.shooter) + " " + signed(k * pair.gun_water)));
      }
      part(_("Special"), pair.special_water);
      item.append(parts);
      pairs.append(item);
    });
    box.append(pairs);

    if (s.cuts.length) {
      const cuts = el("div", "cuts");
      cuts.append(el("h3", "", _("Could not cover the loss")));
      s.cuts.forEach((c) =>
        cuts.append(el("p", "", fmt(_("%(from)s owed %(to)s %(owed)s coins and paid %(paid)s."), {
          from: who(c.from),
          to: who(c.to),
          owed: number(c.owed),
          paid: number(c.paid),
        }))),
      );
      box.append(cuts);
    }
    if (s.transfers.length) {
      const moves = el("details", "transfers");
      moves.append(el("summary", "", _("Coins moved")));
      s.transfers.forEach((t) => {
        moves.append(el("p", "", who(t.from) + " → " + who(t.to) + ": " + number(t.coins)));
      });
      box.append(moves);
    }
  }

  // ---- the controls -------------------------------------------------------------------------

  function renderTrack() {
    const track = $("replay-track");
    if (!track.childNodes.length) {
      steps.forEach((step, i) => {
        const li = el("li");
        const button = el("button", "rp-track-step", stepName(step));
        button.type = "button";
        button.dataset.index = String(i);
        button.addEventListener("click", () => {
          pause();
          go(i);
        });
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

  function renderIndicator() {
    const indicator = $("replay-step");
    indicator.dataset.step = String(current + 1);
    indicator.dataset.steps = String(steps.length);
    indicator.dataset.kind = steps[current].kind;
    indicator.textContent = fmt(_("Step %(n)s of %(total)s · %(name)s"), {
      n: current + 1,
      total: steps.length,
      name: stepName(steps[current]),
    });
    $("replay-prev").disabled = current === 0;
    $("replay-next").disabled = current === steps.length - 1;
  }

  function render() {
    root.dataset.step = String(current);
    root.dataset.kind = steps[current].kind;
    renderIndicator();
    renderTrack();
    renderCaption();
    renderSeats();
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
      if (current >= steps.length - 1) return pause();
      go(current + 1);
      if (current >= steps.length - 1) pause();
    }, PLAY_MS);
    setPlaying(true);
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
    const keys = { ArrowLeft: () => go(current - 1), ArrowRight: () => go(current + 1), Home: () => go(0), End: () => go(steps.length - 1) };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    pause();
    action();
  });

  // A player's review of its own hand (issue 17): fetched on demand from the games API.
  const reviewButton = $("review-button");
  if (reviewButton && window.ShisanshuiReview) {
    reviewButton.addEventListener("click", () => {
      window.ShisanshuiReview.load(`/api/games/rounds/${data.round.id}/review/`, $("review-box"), {
        specialName,
      });
    });
  }

  root.hidden = false;
  setPlaying(false);
  render();
})();

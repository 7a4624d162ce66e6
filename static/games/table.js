// The table page: one seated player's live Shisanshui table, driven by ws/table/<room_id>/
// (docs/protocol.md). No framework, no build step; cards.js draws the cards and ranks rows,
// SortableJS (static/vendor/sortablejs) does drag and drop, and every string goes through
// gettext() from /jsi18n/.
//
// Stable hooks for browser tests (data-testid):
//   phase               data-phase="waiting|dealing|special_choice|arranging|comparing|settled"
//   connection-state    data-state="live|reconnecting|closed"
//   my-balance          data-balance="<int>" (updated after a settlement)
//   seat                one per occupied seat, data-position="<n>" (data-me="true" for yours)
//   ready-button, ready-countdown
//   special-dialog, special-yes, special-no
//   hand                the unplaced cards; row-front, row-middle, row-back: the rows
//                       every card element has data-card="AS" (rank then suit)
//   sort-rank, sort-suit, reset
//   suggestion          one per suggestion (click applies it)
//   foul-warning        names the rows; data-rows="front,middle"
//   submit-button, arrange-countdown, auto-notice
//   compare-panel, gun-animation, home-run-animation
//   settlement-panel    with one settlement-delta per player:
//                       data-testid="settlement-delta" data-position="<n>" data-delta="<int>"
//   leave-button
(function () {
  "use strict";

  const C = window.ShisanshuiCards;
  const root = document.getElementById("table");
  if (!root || !C) return;

  const cfg = JSON.parse(document.getElementById("table-config").textContent);
  const gettext = window.gettext || ((s) => s);
  const interpolate =
    window.interpolate || ((fmt, obj) => fmt.replace(/%\((\w+)\)s/g, (_, k) => String(obj[k])));
  const _ = gettext;
  const fmt = (text, params) => interpolate(text, params, true);
  const lang = document.documentElement.lang || undefined;
  const $ = (id) => document.getElementById(id);

  const ME = cfg.position;
  const ROWS = ["front", "middle", "back"];
  const ROW_SIZE = { front: 3, middle: 5, back: 5 };
  const ROW_NAMES = { front: _("Front"), middle: _("Middle"), back: _("Back") };
  const PLAY_PHASES = ["special_choice", "arranging"];
  const ROUND_PHASES = ["dealing", "special_choice", "arranging", "comparing"];
  const PHASE_NAMES = {
    waiting: _("Waiting"),
    dealing: _("Dealing"),
    special_choice: _("Special hands"),
    arranging: _("Arranging"),
    comparing: _("Comparing"),
    settled: _("Settled"),
  };
  const AUTO_REASONS = {
    timeout: _("time ran out"),
    hosted: _("you were away (hosted)"),
    escaped: _("you left the round"),
  };
  const STORE_KEY = "shisanshui.table." + cfg.room_id;
  const FINAL_CLOSE = { 4000: "left", 4401: "login", 4403: "not_seated" };

  // ---- state --------------------------------------------------------------------------------
  let table = freshTable();
  let you = freshYou();
  let layout = { hand: [], front: [], middle: [], back: [] }; // my arrangement being built
  let selected = new Set();
  let landed = new Set(); // cards whose deal animation has played
  let compare = freshCompare();
  let deal = null;
  let skew = 0; // server clock minus ours, seconds
  let balance = cfg.balance;
  const names = Object.assign({}, cfg.names);
  let settlementSeen = 0; // the round whose settlement the player has seen (closed)
  let timers = [];
  let leaving = false;
  let closed = false;
  let submitting = false;
  let serverFoul = null;

  function freshTable() {
    return {
      version: 0,
      phase: "waiting",
      round_no: 0,
      capacity: cfg.seats,
      started_at: null,
      deadline: null,
      arrange_deadline: null,
      duration_ms: null,
      config: null,
      seats: {},
      result: null,
    };
  }

  function freshYou() {
    return {
      hand: null,
      special: null,
      special_choice: null,
      arrangement: null,
      auto: null,
      draft: null,
      suggestions: null,
      deadline: null,
    };
  }

  function freshCompare() {
    // rows[position][row] = {cards, category, water}; specials[position] = payload; log lines
    return { rows: {}, specials: {}, log: [], water: {} };
  }

  function nowSec() {
    return Date.now() / 1000 + skew;
  }

  function mySeat() {
    return table.seats[ME] || null;
  }

  function inRound() {
    const seat = mySeat();
    return Boolean(seat && seat.in_round && ROUND_PHASES.includes(table.phase));
  }

  function submitted() {
    return Boolean(you.arrangement) || you.special_choice === true;
  }

  function choosing() {
    return Boolean(you.special) && you.special_choice === null && table.phase === "special_choice";
  }

  function canArrange() {
    return (
      !closed &&
      PLAY_PHASES.includes(table.phase) &&
      Boolean(you.hand) &&
      !submitted() &&
      !choosing() &&
      Boolean(mySeat() && mySeat().in_round && !mySeat().escaped)
    );
  }

  function specialWater(id) {
    const specials = table.config && table.config.specials;
    return specials && specials[id] ? specials[id].water : null;
  }

  function nameOf(position) {
    return names[position] || fmt(_("Seat %(n)s"), { n: Number(position) + 1 });
  }

  function bilingual(info) {
    if (!info) return "";
    return info.zh + " " + info.en;
  }

  function categoryName(id) {
    return bilingual(cfg.categories[id]) || id;
  }

  function specialName(id) {
    return bilingual(cfg.specials[id]) || id;
  }

  function number(value) {
    return Number(value).toLocaleString(lang);
  }

  function signed(value) {
    return (value > 0 ? "+" : "") + number(value);
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function toast(message, isError) {
    const box = $("toast");
    box.textContent = message;
    box.classList.toggle("error", Boolean(isError));
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => (box.hidden = true), 4000);
  }

  // Run fn at the server time `epoch` (seconds) + `offsetMs`; at once if that has passed.
  function at(epoch, offsetMs, fn) {
    const due = (epoch - skew) * 1000 + (offsetMs || 0);
    const id = setTimeout(() => {
      timers = timers.filter((t) => t.id !== id);
      fn();
    }, Math.max(0, due - Date.now()));
    timers.push({ id, fn });
  }

  // Play every pending animation step now (a snapshot or a settlement overtakes them).
  function flushTimers() {
    const pending = timers;
    timers = [];
    pending.forEach((t) => {
      clearTimeout(t.id);
      t.fn();
    });
  }

  // ---- persistence (a reload sends `since` and continues from the stored view) ---------------
  function persist() {
    try {
      sessionStorage.setItem(
        STORE_KEY,
        JSON.stringify({
          table,
          you,
          layout,
          compare,
          names,
          balance,
          settlementSeen,
        }),
      );
    } catch (e) {
      /* storage full or disabled: a reload gets a snapshot */
    }
  }

  function restore() {
    let saved = null;
    try {
      saved = JSON.parse(sessionStorage.getItem(STORE_KEY) || "null");
    } catch (e) {
      saved = null;
    }
    // Mid-comparison the animation's steps are lost with the page: ask for a snapshot then.
    if (!saved || !saved.table || !saved.table.version || saved.table.phase === "comparing") return;
    table = saved.table;
    you = saved.you || freshYou();
    layout = saved.layout || layout;
    compare = saved.compare || freshCompare();
    Object.assign(names, saved.names || {});
    settlementSeen = saved.settlementSeen || 0;
    if (you.hand) you.hand.forEach((c) => landed.add(c));
  }

  // ---- the socket ----------------------------------------------------------------------------
  let socket = null;
  let retryDelay = 1000;
  let pingTimer = null;
  let nextId = 1;
  const pendingActions = new Map(); // id -> type

  function setConnection(state, text) {
    const node = root.querySelector("[data-testid=connection-state]");
    node.dataset.state = state;
    node.textContent =
      text ||
      { live: _("Live"), reconnecting: _("Reconnecting…"), closed: _("Disconnected") }[state];
  }

  function connect() {
    if (closed) return;
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + cfg.ws_url);
    socket.addEventListener("open", () => {
      retryDelay = 1000;
      send({ type: "hello", id: "hello-" + nextId++, since: table.version || null });
      clearInterval(pingTimer);
      pingTimer = setInterval(() => send({ type: "ping", id: "ping-" + nextId++ }), 20000);
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      const handler = handlers[message.type];
      if (handler) handler(message);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      clearInterval(pingTimer);
      if (FINAL_CLOSE[event.code]) {
        closeForGood(FINAL_CLOSE[event.code]);
        return;
      }
      setConnection("reconnecting");
      // Closed for flooding (4429): wait out the cool-down the server named, if it did.
      const wait = event.code === 4429 ? Math.max(retryDelay, coolDownMs || 5000) : retryDelay;
      coolDownMs = 0;
      setTimeout(connect, wait);
      retryDelay = Math.min(retryDelay * 2, 15000);
    });
  }

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  function act(type, fields) {
    const id = type + "-" + Date.now().toString(36) + "-" + nextId++;
    pendingActions.set(id, type);
    const ok = send(Object.assign({ type, id }, fields || {}));
    if (!ok && type !== "draft") toast(_("Not connected. Trying again…"), true);
    return ok;
  }

  // The server's cool-down (ms) named by the last `rate_limited` error, for the reconnect.
  let coolDownMs = 0;
  // The `left` event that sent this player away, if any (its reason is shown).
  let sentAway = null;

  function closeForGood(reason) {
    closed = true;
    sessionStorage.removeItem(STORE_KEY);
    if (reason === "left" && leaving && table.phase !== "comparing") {
      window.location.href = cfg.lobby_url;
      return;
    }
    const why = {
      left:
        sentAway && sentAway.reason === "insufficient_coins"
          ? fmt(
              _("You went back to the room list: this table needs at least %(minimum)s coins and you have %(balance)s."),
              { minimum: coinText(sentAway.minimum), balance: coinText(sentAway.balance) }
            )
          : _("You are no longer at this table."),
      login: _("You are logged out. Log in again."),
      not_seated: _("You are not seated at this table."),
    }[reason];
    setConnection("closed", _("Closed"));
    const banner = $("closed-banner");
    banner.querySelector(".why").textContent = why;
    banner.hidden = false;
    render();
  }

  const handlers = {
    welcome(message) {
      setConnection("live");
      if (message.snapshot) applySnapshot(message.snapshot);
      else applyEvents(message.events || []);
    },
    events(message) {
      applyEvents(message.events);
    },
    ok(message) {
      const type = pendingActions.get(message.id);
      pendingActions.delete(message.id);
      if (type === "submit") submitting = false;
      if (type === "leave" && !inRound()) leaving = true;
      if (type === "leave" && inRound()) toast(_("You left the round: it is played for you."));
      render();
    },
    error(message) {
      const type = pendingActions.get(message.id);
      pendingActions.delete(message.id);
      const error = message.error || {};
      if (type === "submit") submitting = false;
      if (type === "draft") return; // drafts are best effort
      if (error.code === "foul") {
        serverFoul = error.rows || [];
        render();
      }
      if (error.code === "not_at_table") closeForGood("left");
      if (error.code === "rate_limited" && typeof error.retry_after === "number") {
        coolDownMs = Math.ceil(error.retry_after * 1000);
      }
      toast(errorText(error), true);
      render();
    },
    pong() {},
  };

  function coinText(value) {
    return typeof value === "number" ? value.toLocaleString() : "?";
  }

  function errorText(error) {
    const known = {
      foul: _("Foul: a row beats the one after it."),
      wrong_phase: _("Not now: the table is in another phase."),
      already_ready: _("You are already ready."),
      already_submitted: _("You already submitted."),
      choose_special_first: _("Answer the special hand question first."),
      not_in_round: _("You do not play this round."),
      escaped: _("You have left this round."),
      insufficient_coins: fmt(
        _("You need at least %(minimum)s coins to play at this table; you have %(balance)s."),
        { minimum: coinText(error.minimum), balance: coinText(error.balance) }
      ),
      rate_limited: _("Too many requests. Wait a moment and try again."),
      server_error: _("Something went wrong. Try again."),
    };
    return known[error.code] || error.message || error.code;
  }

  // ---- applying the server's view ------------------------------------------------------------
  function applySnapshot(snap) {
    timers.forEach((t) => clearTimeout(t.id));
    timers = [];
    const seats = {};
    snap.seats.forEach((s) => (seats[s.position] = s));
    table = {
      version: snap.version,
      phase: snap.phase,
      round_no: snap.round_no,
      capacity: snap.capacity,
      started_at: snap.started_at,
      deadline: snap.deadline,
      arrange_deadline: snap.arrange_deadline,
      duration_ms: null,
      config: snap.config,
      seats,
      result: snap.result,
    };
    you = snap.you || freshYou();
    if (you.deadline && you.remaining !== null && you.remaining !== undefined) {
      skew = you.deadline - you.remaining - Date.now() / 1000;
    }
    landed = new Set(you.hand || []);
    deal = null;
    selected.clear();
    serverFoul = null;
    layoutFromYou();
    compare = freshCompare();
    snap.seats.forEach((s) => {
      if (!s.revealed) return;
      if (s.revealed.special) compare.specials[s.position] = s.revealed;
      else {
        compare.rows[s.position] = {};
        ROWS.forEach((r) => {
          let category = null;
          try {
            category = C.evaluate(s.revealed[r], table.config && table.config.a2345).category;
          } catch (e) {
            /* not a row */
          }
          compare.rows[s.position][r] = { cards: s.revealed[r], category, water: null };
        });
      }
    });
    missingNames();
    persist();
    render();
  }

  // The local arrangement from `you`: the submitted rows, or the hand with the saved draft.
  function layoutFromYou() {
    const hand = you.hand || [];
    const a = you.arrangement;
    if (a) {
      layout = { hand: [], front: a.front.slice(), middle: a.middle.slice(), back: a.back.slice() };
      return;
    }
    layout = { hand: hand.slice(), front: [], middle: [], back: [] };
    const draft = you.draft;
    if (!draft || typeof draft !== "object") return;
    const left = new Set(hand);
    ROWS.forEach((r) => {
      const cards = Array.isArray(draft[r]) ? draft[r] : [];
      cards.forEach((c) => {
        if (left.has(c) && layout[r].length < ROW_SIZE[r]) {
          left.delete(c);
          layout[r].push(c);
        }
      });
    });
    const order = Array.isArray(draft.hand) ? draft.hand.filter((c) => left.has(c)) : [];
    layout.hand = order.concat(hand.filter((c) => left.has(c) && !order.includes(c)));
  }

  function applyEvents(events) {
    let changed = false;
    events.forEach((event) => {
      if (event.version <= table.version) return;
      const apply = eventHandlers[event.type];
      if (apply) apply(event.payload || {});
      table.version = event.version;
      changed = true;
    });
    if (changed) {
      persist();
      render();
    }
  }

  function seatOf(position) {
    return table.seats[position];
  }

  const eventHandlers = {
    seated(p) {
      table.seats[p.position] = {
        position: p.position,
        player: p.player,
        ready: false,
        ready_deadline: p.ready_deadline,
        connected: true,
        in_round: false,
        hosted: false,
        escaped: false,
        left: false,
        done: false,
        auto: null,
        revealed: null,
      };
      if (p.player === cfg.player_id) names[p.position] = cfg.username;
      if (!names[p.position]) missingNames();
      else if (p.position !== ME) toast(fmt(_("%(name)s sat down."), { name: nameOf(p.position) }));
    },
    ready(p) {
      const seat = seatOf(p.position);
      if (seat) seat.ready = true;
    },
    left(p) {
      const who = nameOf(p.position);
      delete table.seats[p.position];
      if (p.position === ME) sentAway = p;
      if (p.position !== ME) {
        delete names[p.position];
        const text = {
          left: _("%(name)s left the table."),
          ready_timeout: _("%(name)s did not press Ready and went back to the lobby."),
          escaped: _("%(name)s escaped and was removed."),
        }[p.reason];
        toast(fmt(text || _("%(name)s left the table."), { name: who }));
      }
    },
    config(p) {
      table.config = p.config;
    },
    round_start(p) {
      flushTimers();
      table.round_no = p.round_no;
      table.config = p.config;
      table.result = null;
      Object.values(table.seats).forEach((s) => {
        const playing = p.positions.includes(s.position);
        Object.assign(s, {
          ready: false,
          ready_deadline: null,
          in_round: playing,
          hosted: false,
          escaped: false,
          left: false,
          done: false,
          auto: null,
          revealed: null,
        });
      });
      you = freshYou();
      layout = { hand: [], front: [], middle: [], back: [] };
      selected.clear();
      landed = new Set();
      compare = freshCompare();
      serverFoul = null;
      deal = null;
    },
    phase(p) {
      table.phase = p.phase;
      table.started_at = p.started_at;
      table.deadline = p.deadline;
      if ("arrange_deadline" in p) table.arrange_deadline = p.arrange_deadline;
      if ("duration_ms" in p) table.duration_ms = p.duration_ms;
      if (PLAY_PHASES.includes(p.phase)) (you.hand || []).forEach((c) => landed.add(c));
      if (p.phase === "settled") {
        Object.values(table.seats).forEach((s) => {
          s.ready = false;
          s.ready_deadline = p.deadline;
          s.in_round = false;
        });
      }
    },
    deal(p) {
      deal = p;
    },
    hand(p) {
      you.hand = p.cards;
      you.special = p.special;
      you.suggestions = p.suggestions;
      you.special_choice = null;
      layout = { hand: p.cards.slice(), front: [], middle: [], back: [] };
      landed = new Set();
      const start = deal ? deal.started_at : table.started_at || nowSec();
      p.cards.forEach((card, i) => {
        at(start, p.offsets_ms[i], () => {
          landed.add(card);
          const node = root.querySelector('.zone [data-card="' + card + '"]');
          if (node) {
            node.classList.remove("undealt");
            node.classList.add("dealt");
            // Once: moving the card to a row later must not replay the animation.
            node.addEventListener("animationend", () => node.classList.remove("dealt"), { once: true });
          }
        });
      });
    },
    special_chosen(p) {
      you.special_choice = p.play_special;
      you.auto = p.auto;
      if (p.deadline) you.deadline = p.deadline;
    },
    submitted(p) {
      const seat = seatOf(p.position);
      if (seat) {
        seat.done = true;
        seat.auto = p.auto;
      }
    },
    arrangement(p) {
      you.arrangement = { front: p.front, middle: p.middle, back: p.back };
      you.auto = p.auto;
      layout = { hand: [], front: p.front.slice(), middle: p.middle.slice(), back: p.back.slice() };
      selected.clear();
      serverFoul = null;
    },
    draft_saved(p) {
      you.draft = p.draft;
    },
    disconnected(p) {
      const seat = seatOf(p.position);
      if (seat) {
        seat.connected = false;
        seat.hosted = p.hosted;
      }
    },
    reconnected(p) {
      const seat = seatOf(p.position);
      if (seat) {
        seat.connected = true;
        seat.hosted = false;
      }
    },
    escaped(p) {
      const seat = seatOf(p.position);
      if (seat) seat.escaped = true;
    },
    reveal(p) {
      at(table.started_at, p.offset_ms, () => {
        p.hands.forEach((h) => {
          compare.rows[h.position] = compare.rows[h.position] || {};
          compare.rows[h.position][p.row] = { cards: h.cards, category: h.category, water: null };
          logLine(
            fmt(_("%(row)s: %(name)s shows %(category)s"), {
              row: ROW_NAMES[p.row],
              name: nameOf(h.position),
              category: categoryName(h.category),
            }),
            "reveal",
          );
        });
        render();
      });
    },
    row_result(p) {
      at(table.started_at, p.offset_ms + 1, () => {
        const parts = [];
        p.water.forEach((w) => {
          const rows = compare.rows[w.position];
          if (rows && rows[p.row]) rows[p.row].water = w.water;
          parts.push(nameOf(w.position) + " " + signed(w.water));
        });
        logLine(ROW_NAMES[p.row] + " · " + parts.join(" · "), "row");
        render();
      });
    },
    gun(p) {
      at(table.started_at, p.offset_ms, () => {
        const line = fmt(_("%(shooter)s shoots %(target)s (打枪): +%(water)s water"), {
          shooter: nameOf(p.shooter),
          target: nameOf(p.target),
          water: p.water,
        });
        logLine(line, "gun");
        if (p.kind !== "home_run") play("gun-animation", line);
        render();
      });
    },
    home_run(p) {
      at(table.started_at, p.offset_ms, () => {
        const line = fmt(_("%(shooter)s hits a home run (全垒打)!"), { shooter: nameOf(p.shooter) });
        logLine(line, "home-run");
        play("home-run-animation", line, 2600);
        render();
      });
    },
    reveal_special(p) {
      at(table.started_at, p.offset_ms, () => {
        compare.specials[p.position] = p;
        logLine(
          fmt(_("%(name)s plays the special hand %(special)s: %(water)s water"), {
            name: nameOf(p.position),
            special: specialName(p.special),
            water: p.water,
          }),
          "special",
        );
        render();
      });
    },
    settled(p) {
      flushTimers();
      table.result = p.result;
      const me = (p.result.players || []).find((pl) => pl.position === ME);
      if (me) refreshBalance(me.delta);
    },
  };

  function logLine(text, kind) {
    compare.log.push({ text, kind });
  }

  function play(id, line, ms) {
    const node = $(id);
    node.querySelector(".fx-line").textContent = line;
    node.hidden = false;
    node.classList.remove("play");
    void node.offsetWidth; // restart the animation
    node.classList.add("play");
    clearTimeout(node.hideTimer);
    node.hideTimer = setTimeout(() => (node.hidden = true), ms || 1800);
  }

  function setBalance(value) {
    balance = value;
    const node = root.querySelector("[data-testid=my-balance]");
    node.dataset.balance = String(value);
    node.textContent = number(value);
    const header = document.querySelector("[data-header-balance]");
    if (header) header.textContent = number(value);
  }

  // The wallet after a settlement: asked from the server (a reload may already include it).
  function refreshBalance(delta) {
    const guess = balance + delta;
    fetch(cfg.wallet_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((wallet) => setBalance(wallet && Number.isInteger(wallet.balance) ? wallet.balance : guess))
      .catch(() => setBalance(guess))
      .finally(render);
  }

  // Usernames of seats the page did not know: the room's public row has them.
  let fetchingNames = false;
  function missingNames() {
    const unknown = Object.keys(table.seats).some((p) => !names[p]);
    if (!unknown || fetchingNames) return;
    fetchingNames = true;
    fetch(cfg.room_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((room) => {
        if (room && room.players) room.players.forEach((pl) => (names[pl.position] = pl.username));
        render();
      })
      .catch(() => {})
      .finally(() => (fetchingNames = false));
  }

  // ---- rendering -----------------------------------------------------------------------------
  function render() {
    root.dataset.phase = table.phase;
    const phaseNode = root.querySelector("[data-testid=phase]");
    phaseNode.dataset.phase = table.phase;
    phaseNode.textContent =
      PHASE_NAMES[table.phase] + (table.round_no ? " · " + fmt(_("Round %(n)s"), { n: table.round_no }) : "");
    renderSeats();
    renderCenter();
    renderArrange();
    renderSpecial();
    renderSettlement();
    tick();
  }

  // Seats around the table, yours at the bottom; counter-clockwise order goes to your right.
  const PLACES = {
    2: ["bottom", "top"],
    3: ["bottom", "right", "left"],
    4: ["bottom", "right", "top", "left"],
    5: ["bottom", "right", "top-right", "top-left", "left"],
  };

  function renderSeats() {
    const box = $("seats");
    box.textContent = "";
    const n = table.capacity || cfg.seats;
    const places = PLACES[n] || PLACES[4];
    for (let position = 0; position < n; position++) {
      const rel = (position - ME + n) % n;
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
      const avatar = el("span", "avatar", (nameOf(position)[0] || "?").toUpperCase());
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
      const player = table.result && (table.result.players || []).find((p) => p.position === position);
      if (player) {
        const delta = el("div", "seat-delta " + (player.delta >= 0 ? "plus" : "minus"), signed(player.delta));
        delta.title = fmt(_("%(water)s water"), { water: signed(player.water) });
        node.append(delta);
      }
      if (position === ME) node.append(el("div", "seat-balance", number(balance)));
      if (position !== ME) node.append(seatCards(position, seat));
      else if (you.special_choice === true && you.hand) node.append(mySpecial());
      box.append(node);
    }
  }

  // What an opponent shows: card backs while dealt, its rows once revealed, its special.
  function seatCards(position, seat) {
    const wrap = el("div", "seat-cards");
    const special = compare.specials[position];
    const rows = compare.rows[position];
    if (special) {
      wrap.append(el("div", "special-tag", specialName(special.special) + " · " + special.water));
      const line = el("div", "mini-row");
      const cards = el("div", "mini-cards thirteen");
      (special.cards || []).forEach((c) => cards.append(C.cardElement(c, { small: true })));
      line.append(cards);
      wrap.append(line);
      return wrap;
    }
    if (rows) {
      ROWS.forEach((r) => {
        const line = el("div", "mini-row");
        line.dataset.row = r;
        const cards = el("div", "mini-cards");
        const shown = rows[r];
        if (shown) shown.cards.forEach((c) => cards.append(C.cardElement(c, { small: true })));
        else for (let i = 0; i < ROW_SIZE[r]; i++) cards.append(C.cardBack({ small: true }));
        line.append(cards);
        if (shown) {
          const label = el("div", "mini-label");
          label.append(el("span", "cat", shown.category ? categoryName(shown.category) : ""));
          if (shown.water !== null && shown.water !== undefined) {
            label.append(el("span", "water " + (shown.water >= 0 ? "plus" : "minus"), signed(shown.water)));
          }
          line.append(label);
        }
        wrap.append(line);
      });
      return wrap;
    }
    if (seat.in_round && ["dealing", "special_choice", "arranging", "comparing"].includes(table.phase)) {
      const backs = el("div", "backs");
      backs.dataset.position = position;
      const count = dealtTo(position);
      for (let i = 0; i < count; i++) backs.append(C.cardBack({ small: true }));
      wrap.append(backs);
    }
    return wrap;
  }

  // The special hand I declared: shown in my seat, since I do not arrange.
  function mySpecial() {
    const wrap = el("div", "seat-cards");
    const water = specialWater(you.special);
    wrap.append(el("div", "special-tag", specialName(you.special) + (water === null ? "" : " · " + water)));
    const cards = el("div", "mini-cards thirteen");
    C.sortByRank(you.hand).forEach((c) => cards.append(C.cardElement(c, { small: true })));
    wrap.append(cards);
    return wrap;
  }

  // How many cards an opponent holds now, following the deal's pace (RULES.md §8.2).
  function dealtTo(position) {
    if (table.phase !== "dealing" || !deal) return 13;
    const index = deal.order.indexOf(position);
    if (index < 0) return 0;
    const elapsed = (nowSec() - deal.started_at) * 1000;
    const n = deal.order.length;
    let count = 0;
    for (let k = 0; k < 13; k++) {
      const offset = deal.mode === "simultaneous" ? k * deal.interval_ms : (k * n + index) * deal.interval_ms;
      if (offset <= elapsed) count++;
    }
    return count;
  }

  function renderCenter() {
    const seat = mySeat();
    const lobbyPhase = ["waiting", "settled"].includes(table.phase);
    const readyBox = $("ready-box");
    readyBox.hidden = closed || !lobbyPhase || !seat || seat.ready;
    let status = "";
    const others = Object.values(table.seats).filter((s) => s.position !== ME);
    if (closed) status = "";
    else if (lobbyPhase) {
      if (!seat) status = "";
      else if (!seat.ready) status = _("Press Ready to play the next round.");
      else if (others.length === 0) status = _("Waiting for another player to sit down…");
      else status = _("Waiting for the others to be ready…");
    } else if (table.phase === "dealing") status = _("Dealing…");
    else if (PLAY_PHASES.includes(table.phase)) {
      if (!seat || !seat.in_round) status = _("A round is being played. You join the next one.");
      else if (you.special_choice === true) status = _("You play your special hand. Waiting for the others…");
      else if (submitted()) status = _("Submitted. Waiting for the others…");
      else if (choosing()) status = _("You hold a special hand!");
      else status = _("Arrange your 13 cards: front 3, middle 5, back 5.");
    } else if (table.phase === "comparing") status = _("Comparing hands…");
    $("status-line").textContent = status;
    const panel = $("compare-panel");
    panel.hidden = compare.log.length === 0 && !Object.keys(compare.rows).length;
    const log = $("compare-log");
    log.textContent = "";
    compare.log.forEach((line) => log.append(el("li", "log-" + line.kind, line.text)));
    log.scrollTop = log.scrollHeight;
  }

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

  function fillZone(zone, cards, options) {
    const box = root.querySelector('.zone[data-zone="' + zone + '"]');
    const wanted = cards.map((c) => {
      const node = cardNode(c);
      node.classList.toggle("selected", selected.has(c));
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

  function currentFoul() {
    if (serverFoul && serverFoul.length) return serverFoul;
    const a2345 = table.config ? table.config.a2345 : "lowest";
    return C.foulRows(layout, a2345).rows;
  }

  function renderArrange() {
    const section = $("arrange");
    const seat = mySeat();
    const hasCards = Boolean(you.hand) && Boolean(seat && (seat.in_round || table.result));
    section.hidden = !hasCards || you.special_choice === true;
    if (section.hidden) return;
    const editable = canArrange();
    section.classList.toggle("locked", !editable);
    section.classList.toggle("compare-mode", !PLAY_PHASES.includes(table.phase) && table.phase !== "dealing");
    const fouled = editable ? currentFoul() : [];
    const a2345 = table.config ? table.config.a2345 : "lowest";
    ROWS.forEach((r) => {
      const zone = root.querySelector('.row-zone[data-row="' + r + '"]');
      fillZone(r, layout[r], { foul: fouled.includes(r), shown: true });
      zone.classList.toggle("full", layout[r].length === ROW_SIZE[r]);
      zone.classList.toggle("foul", fouled.includes(r));
      zone.querySelector(".row-name").textContent = ROW_NAMES[r] + " " + layout[r].length + "/" + ROW_SIZE[r];
      let cat = "";
      if (layout[r].length === ROW_SIZE[r]) cat = categoryName(C.evaluate(layout[r], a2345).category);
      zone.querySelector(".row-cat").textContent = cat;
      const mine = compare.rows[ME] && compare.rows[ME][r];
      const water = zone.querySelector(".row-water");
      const w = mine ? mine.water : null;
      water.textContent = w === null || w === undefined ? "" : signed(w);
      water.className = "row-water " + (w > 0 ? "plus" : w < 0 ? "minus" : "");
    });
    fillZone("hand", layout.hand);
    root.querySelector(".hand-box").hidden = !editable && layout.hand.length === 0;
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
    submit.disabled = !editable || !placed || fouled.length > 0 || submitting;
    $("toolbar").hidden = !editable;
    ["sort-rank", "sort-suit", "reset"].forEach((id) => ($(id).disabled = !editable));
    const notice = $("auto-notice");
    if (you.auto && you.arrangement) {
      notice.hidden = false;
      notice.textContent = fmt(_("Auto-arranged (已自动理牌): %(why)s."), {
        why: AUTO_REASONS[you.auto] || you.auto,
      });
    } else notice.hidden = true;
    renderSuggestions(editable);
    sortables.forEach((s) => s.option("disabled", !editable));
  }

  function renderSuggestions(editable) {
    const list = $("suggestions");
    const box = root.querySelector(".suggestions-box");
    const items = you.suggestions || [];
    box.hidden = !editable || items.length === 0;
    if (box.hidden) return;
    const key = JSON.stringify(items.map((s) => s.front.concat(s.middle, s.back)));
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.textContent = "";
    items.forEach((s, i) => {
      const li = el("li", "suggestion");
      const button = el("button", "suggestion-button");
      button.type = "button";
      button.setAttribute("data-testid", "suggestion");
      button.dataset.index = i;
      ROWS.forEach((r, k) => {
        const part = el("span", "sg-row");
        part.append(el("span", "sg-name", ROW_NAMES[r]));
        part.append(el("span", "sg-cat", categoryName(s.categories[k])));
        button.append(part);
      });
      if (i === 0) button.append(el("span", "sg-best", _("Best")));
      li.append(button);
      list.append(li);
    });
  }

  function renderSpecial() {
    const overlay = $("special-overlay");
    const show = !closed && choosing() && inRound();
    overlay.hidden = !show;
    if (!show) return;
    $("special-name").textContent = specialName(you.special);
    const water = specialWater(you.special);
    $("special-water").textContent =
      water === null ? "" : fmt(_("Worth %(water)s water from each opponent"), { water });
  }

  function renderSettlement() {
    const overlay = $("settlement-overlay");
    const result = table.result;
    const show = Boolean(result) && settlementSeen < table.round_no && ["settled", "waiting"].includes(table.phase);
    overlay.hidden = !show;
    const readyBox = $("ready-box");
    const home = $("center");
    const inDialog = overlay.querySelector(".dialog-actions");
    if (show && readyBox.parentNode !== inDialog) inDialog.prepend(readyBox);
    if (!show && readyBox.parentNode !== home) home.insertBefore(readyBox, $("compare-panel"));
    if (!show) return;
    const body = $("settlement-body");
    if (body.dataset.round === String(table.round_no) && body.dataset.names === JSON.stringify(names)) return;
    body.dataset.round = String(table.round_no);
    body.dataset.names = JSON.stringify(names);
    body.textContent = "";
    const byId = {};
    (result.players || []).forEach((p) => (byId[p.id] = p.position));
    const who = (id) => nameOf(byId[id]);

    const players = el("table", "result-table");
    const head = el("tr");
    [_("Player"), _("Water"), _("Coins"), _("Penalty"), _("Total")].forEach((t) => head.append(el("th", "", t)));
    players.append(head);
    (result.players || [])
      .slice()
      .sort((a, b) => b.delta - a.delta)
      .forEach((p) => {
        const tr = el("tr", p.position === ME ? "me" : "");
        const nameCell = el("td", "", nameOf(p.position));
        if (p.special) nameCell.append(el("span", "special-tag", specialName(p.special)));
        if (p.escaped) nameCell.append(el("span", "badge escaped", _("Escaped")));
        tr.append(nameCell);
        tr.append(el("td", "number", signed(p.water)));
        tr.append(el("td", "number", signed(p.coins)));
        tr.append(el("td", "number", p.penalty ? "-" + number(p.penalty) : "—"));
        const total = el("td", "number delta " + (p.delta >= 0 ? "plus" : "minus"), signed(p.delta));
        total.setAttribute("data-testid", "settlement-delta");
        total.dataset.position = p.position;
        total.dataset.delta = String(p.delta);
        tr.append(total);
        players.append(tr);
      });
    body.append(players);

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
      title.append(el("strong", "", who(a) + " vs " + who(b)));
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
        const label = pair.gun === "home_run" ? _("Home run 全垒打") : _("Gun 打枪");
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
        moves.append(el("p", "", who(t.from) + " → " + to + ": " + number(t.coins) + (t.kind ? " (" + t.kind + ")" : "")));
      });
      body.append(moves);
    }
  }

  // Countdowns, and the deal's card backs, move on their own.
  function secondsLeft(deadline) {
    if (!deadline) return null;
    return Math.max(0, Math.ceil(deadline - nowSec()));
  }

  function tick() {
    const seat = mySeat();
    const ready = $("ready-countdown");
    const readyLeft = seat && !seat.ready ? secondsLeft(seat.ready_deadline) : null;
    ready.textContent = readyLeft === null ? "" : fmt(_("%(s)s s"), { s: readyLeft });
    ready.classList.toggle("urgent", readyLeft !== null && readyLeft <= 5);
    const arrange = $("arrange-countdown");
    const arrangeDeadline = you.deadline && PLAY_PHASES.includes(table.phase) && you.special_choice === false ? you.deadline : table.arrange_deadline;
    const arrangeLeft = canArrange() ? secondsLeft(arrangeDeadline) : null;
    arrange.textContent = arrangeLeft === null ? "" : fmt(_("%(s)s s left to arrange"), { s: arrangeLeft });
    arrange.classList.toggle("urgent", arrangeLeft !== null && arrangeLeft <= 10);
    const special = $("special-countdown");
    special.textContent = choosing()
      ? fmt(_("%(s)s s — no answer counts as Yes"), { s: secondsLeft(table.deadline) })
      : "";
    if (table.phase === "dealing") {
      root.querySelectorAll(".backs").forEach((box) => {
        const want = dealtTo(Number(box.dataset.position));
        while (box.children.length < want) box.append(C.cardBack({ small: true }));
      });
    }
  }

  // ---- the player's actions ------------------------------------------------------------------
  let draftTimer = null;
  function changed() {
    serverFoul = null;
    render();
    clearTimeout(draftTimer);
    draftTimer = setTimeout(() => {
      if (canArrange()) act("draft", { draft: layout });
    }, 700);
  }

  function zoneOf(card) {
    return ["hand"].concat(ROWS).find((z) => layout[z].includes(card));
  }

  function moveSelected(to) {
    const cards = [...selected];
    if (!cards.length) return;
    const room = to === "hand" ? 13 : ROW_SIZE[to] - layout[to].filter((c) => !selected.has(c)).length;
    if (cards.length > room) {
      toast(fmt(_("%(row)s has room for %(n)s more cards."), { row: ROW_NAMES[to], n: Math.max(0, room - 0) }), true);
      return;
    }
    cards.forEach((c) => {
      const from = zoneOf(c);
      if (from === to) return;
      layout[from] = layout[from].filter((x) => x !== c);
      layout[to].push(c);
    });
    selected.clear();
    changed();
  }

  root.querySelector("#arrange").addEventListener("click", (event) => {
    if (!canArrange()) return;
    const card = event.target.closest(".card");
    const rowZone = event.target.closest(".row-zone");
    const zone = rowZone ? rowZone.querySelector(".zone") : event.target.closest("[data-zone]");
    if (card && card.dataset.card) {
      const id = card.dataset.card;
      const target = zone ? zone.dataset.zone : null;
      // Clicking a card of another zone while cards are selected places them there.
      if (selected.size && !selected.has(id) && target && zoneOf([...selected][0]) !== target && target !== "hand") {
        moveSelected(target);
        return;
      }
      if (selected.has(id)) selected.delete(id);
      else selected.add(id);
      render();
      return;
    }
    if (zone && selected.size) moveSelected(zone.dataset.zone);
  });

  root.querySelector("#arrange").addEventListener("dblclick", (event) => {
    if (!canArrange()) return;
    const card = event.target.closest(".card");
    if (!card || zoneOf(card.dataset.card) === "hand") return;
    selected.clear();
    selected.add(card.dataset.card);
    moveSelected("hand");
  });

  $("sort-rank").addEventListener("click", () => {
    layout.hand = C.sortByRank(layout.hand);
    changed();
  });
  $("sort-suit").addEventListener("click", () => {
    layout.hand = C.sortBySuit(layout.hand);
    changed();
  });
  $("reset").addEventListener("click", () => {
    layout = { hand: C.sortByRank(you.hand || []), front: [], middle: [], back: [] };
    selected.clear();
    changed();
  });
  $("suggestions").addEventListener("click", (event) => {
    const button = event.target.closest("[data-testid=suggestion]");
    if (!button || !canArrange()) return;
    const s = you.suggestions[Number(button.dataset.index)];
    layout = { hand: [], front: s.front.slice(), middle: s.middle.slice(), back: s.back.slice() };
    selected.clear();
    changed();
  });
  $("submit-button").addEventListener("click", () => {
    if (!canArrange() || currentFoul().length) return;
    submitting = act("submit", { front: layout.front, middle: layout.middle, back: layout.back });
    render();
  });
  $("ready-button").addEventListener("click", () => {
    act("ready");
  });
  $("special-yes").addEventListener("click", () => act("choose_special", { play_special: true }));
  $("special-no").addEventListener("click", () => act("choose_special", { play_special: false }));
  $("settlement-close").addEventListener("click", () => {
    settlementSeen = table.round_no;
    persist();
    render();
  });
  $("leave-button").addEventListener("click", () => {
    if (closed) {
      window.location.href = cfg.lobby_url;
      return;
    }
    const base = table.config ? table.config.base_score : cfg.base_score;
    const multiplier =
      table.config && table.config.escape_penalty_multiplier !== null && table.config.escape_penalty_multiplier !== undefined
        ? table.config.escape_penalty_multiplier
        : table.config && table.config.escape_covers_losses
          ? 10
          : 5;
    const seat = mySeat();
    if (inRound() && seat && !seat.escaped) {
      const question = fmt(
        _("A round is being played. Leaving now is an escape (逃跑): your hand is played for you and you pay a penalty of %(coins)s coins. Leave anyway?"),
        { coins: number(base * multiplier) },
      );
      if (!window.confirm(question)) return;
    } else {
      leaving = true;
    }
    act("leave");
  });

  // Drag and drop (SortableJS): a row takes at most its size; the hand takes any card.
  const sortables = [];
  function setUpDragAndDrop() {
    if (!window.Sortable) return;
    root.querySelectorAll(".zone").forEach((box) => {
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
          onEnd: () => {
            const next = {};
            root.querySelectorAll(".zone").forEach((z) => {
              next[z.dataset.zone] = [...z.querySelectorAll(".card")].map((c) => c.dataset.card);
            });
            if (ROWS.some((r) => next[r].length > ROW_SIZE[r])) {
              render();
              return;
            }
            layout = next;
            setTimeout(changed, 0);
          },
        }),
      );
    });
  }

  window.addEventListener("pagehide", () => persist());

  restore();
  setUpDragAndDrop();
  setBalance(balance);
  render();
  setInterval(tick, 250);
  setConnection("reconnecting", _("Connecting…"));
  connect();
})();

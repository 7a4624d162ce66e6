// The live lobby: keeps the room list current over ws/lobby/ and sends the page's forms over
// the socket while it is open (the forms still post normally when it is not).
// Protocol: lobby/consumers.py and docs/protocol.md. No framework, no build step.
//
// The list is paginated (newest first, page_size rooms a page) and filtered by the server:
// the socket's snapshot is one page, asked for with the page and filters of the URL, again
// when the filters or the page change. Live events on a page we hold (docs/protocol.md):
// - room.created: on page 1, a matching room goes on top and the oldest row drops off to the
//   next page; on other pages only the total grows (rows shift on the next snapshot);
// - room.updated: a row we hold is replaced (removed if it no longer matches, e.g. full under
//   "with a free seat"); a matching room we do not hold is added when its id falls within
//   the page's range of ids (it has just started to match);
// - room.closed: the row is removed; a page left short while more rooms exist asks for a
//   fresh snapshot of itself (at most once a second).
// A room is listed only while a person sits in it (`people`), or when it is the player's own,
// as the server lists them. Each row shows its variant badge (`variant.labels`, in the page's
// language; the classic deck's subtly), and the variant filter keeps the rooms whose
// `variant.tags` hold the slug chosen. The seat banner ("you are in a round at table X — return") follows
// the player's seat in the rows, and `seat.round` messages when their round starts or ends.
(function () {
  "use strict";

  const root = document.querySelector("[data-lobby]");
  if (!root || !("WebSocket" in window)) return;

  const strings = JSON.parse(document.getElementById("lobby-strings").textContent);
  const username = root.dataset.username;
  const lang = document.documentElement.lang || undefined;
  const tbody = root.querySelector("#lobby-rooms tbody");
  const empty = root.querySelector("#lobby-empty");
  const rowTemplate = root.querySelector("#lobby-row-template");
  const filterForm = root.querySelector("#lobby-filters");
  const flash = root.querySelector("#lobby-flash");
  const live = root.querySelector("#lobby-live");
  const mySeat = root.querySelector("#my-seat");
  const playNow = root.querySelector("#play-now");
  const NUMBER_FIELDS = new Set(["base_score", "seats", "room", "rules", "series_rounds"]);

  const pager = root.querySelector("#lobby-pager");
  const rooms = new Map(); // room id -> its public row (as in the events), this page's only
  const view = {
    page: Number(pager.dataset.page) || 1,
    pages: Number(pager.dataset.pages) || 1,
    total: Number(pager.dataset.total) || 0,
    pageSize: Number(pager.dataset.pageSize) || 50,
  };
  let seat = JSON.parse(document.getElementById("lobby-seat").textContent); // or null
  let inRound = mySeat.dataset.inRound === "true"; // playing a round at that table
  let socket = null;
  let retryDelay = 1000;
  let nextRequest = 1;
  let refreshTimer = null;

  // The table's "why you are back here" (?left=) is said once: once the page is live, the
  // address drops it, so a reload does not repeat it.
  function forgetLeftReason() {
    const address = new URL(window.location.href);
    if (!address.searchParams.has("left")) return;
    address.searchParams.delete("left");
    window.history.replaceState(null, "", address.pathname + address.search + address.hash);
  }

  function format(template, params) {
    return template.replace(/%\((\w+)\)s/g, (_, key) => String(params[key]));
  }

  // The table page of a room (the page gives the URL of room 0).
  function tableUrl(roomId) {
    return root.dataset.tableUrl.replace(/\/0\/$/, "/" + roomId + "/");
  }

  // What players see of a seated player: a bot's nickname in the page's language (a live row
  // carries both), else the name the server gave (the username).
  const chinese = String(lang).toLowerCase().startsWith("zh");
  function playerName(p) {
    const nick = p.nickname && (chinese ? p.nickname.zh : p.nickname.en);
    return nick || p.name || p.username;
  }

  // A room's or its rules' name in the page's language: a live row carries both (`names`).
  function nameOf(item) {
    const names = item && item.names;
    return (names && (chinese ? names.zh : names.en)) || (item && item.name) || "";
  }

  function number(value) {
    return Number(value).toLocaleString(lang);
  }

  function say(message, isError) {
    flash.textContent = message;
    flash.classList.toggle("error", Boolean(isError));
    flash.hidden = false;
  }

  // The filters of the form; the server applies them, events are checked against them here.
  function filters() {
    const data = new FormData(filterForm);
    return {
      baseScore: data.get("base_score") ? Number(data.get("base_score")) : null,
      seats: data.get("seats") ? Number(data.get("seats")) : null,
      free: data.get("free") === "on",
      variant: data.get("variant") || null,
    };
  }

  function matches(row, wanted) {
    if (row.people === 0 && row.owner !== username) return false; // nobody to play with
    if (wanted.baseScore !== null && row.base_score !== wanted.baseScore) return false;
    if (wanted.seats !== null && row.seats !== wanted.seats) return false;
    if (wanted.free && row.seats_taken >= row.seats) return false;
    if (wanted.variant !== null && !(row.variant && row.variant.tags.includes(wanted.variant))) {
      return false;
    }
    return true;
  }

  function fillRow(tr, row) {
    const full = row.seats_taken >= row.seats;
    const mine = seat !== null && seat.room.id === row.id;
    tr.dataset.room = row.id;
    tr.dataset.version = row.version;
    tr.querySelector("[data-field=name]").textContent = nameOf(row);
    tr.querySelector(".private-marker").hidden = !row.private;
    // A duplicate match's table: its number in the match, a link to the match's results.
    // (A server-drawn row of an ordinary room has no badge: one is made when needed.)
    let match = tr.querySelector("[data-field=match]");
    if (!match && row.match) {
      match = document.createElement("a");
      match.className = "match-badge";
      match.dataset.field = "match";
      match.dataset.testid = "match-badge";
      tr.querySelector("[data-field=name]").after(" ", match);
    }
    if (match) {
      match.hidden = !row.match;
      if (row.match) {
        match.textContent = format(strings.duplicate, { table: row.match.table, tables: row.match.tables });
        match.href = strings.match_url.replace(/\/0\/$/, "/" + row.match.id + "/");
      }
    }
    tr.querySelector("[data-field=rules]").textContent = nameOf(row.rules);
    const badge = tr.querySelector("[data-field=variant]");
    const variant = row.variant || { tags: [], label: "", labels: { zh: "", en: "" } };
    badge.textContent = (chinese ? variant.labels.zh : variant.labels.en) || variant.label;
    badge.dataset.variant = variant.tags.join(" ");
    badge.classList.toggle("classic", variant.tags.length === 1 && variant.tags[0] === "classic");
    badge.hidden = variant.tags.length === 0;
    tr.querySelector("[data-field=base_score]").textContent = number(row.base_score);
    tr.querySelector("[data-field=seats]").textContent =
      row.seats_taken + " / " + row.seats + (row.watchers > 0 ? " · 👁 " + row.watchers : "");
    // Watch: a room that allows spectators, for a player not seated there.
    let watch = tr.querySelector("[data-field=watch]");
    const watchable = row.allow_spectators && row.status === "open" && !mine;
    if (!watch && watchable) {
      watch = document.createElement("a");
      watch.className = "btn secondary watch-link";
      watch.dataset.field = "watch";
      watch.dataset.testid = "watch-link";
      watch.textContent = strings.watch;
      tr.querySelector(".actions").prepend(watch);
    }
    if (watch) {
      watch.hidden = !watchable;
      watch.href = tableUrl(row.id) + "watch/";
    }
    tr.querySelector("[data-field=entry_minimum]").textContent = number(row.entry_minimum);
    tr.querySelector("[data-field=players]").textContent = row.players
      .map((p) => (p.username === username ? playerName(p) + " (" + strings.you + ")" : playerName(p)))
      .join(", ");
    // The bot level, when bots sit there (a server-drawn row without bots has no badge yet).
    let level = tr.querySelector("[data-field=bot_level]");
    if (!level) {
      level = document.createElement("span");
      level.className = "bot-level-badge";
      level.dataset.field = "bot_level";
      level.dataset.testid = "bot-level";
      tr.querySelector(".players-cell").append(" ", level);
    }
    level.textContent = ((strings.bot_levels || {})[row.bot_level] || row.bot_level || "");
    level.dataset.level = row.bot_level || "";
    level.hidden = !(row.seats_taken > row.people);
    const join = tr.querySelector(".join-form");
    join.hidden = seat !== null || full;
    join.querySelector("input[name=room]").value = row.id;
    const code = join.querySelector("input[name=code]");
    code.hidden = code.disabled = !row.private;
    tr.querySelector(".full-marker").hidden = !full || mine;
    tr.querySelector(".here-marker").hidden = !mine;
    const close = tr.querySelector(".close-form");
    close.hidden = !(row.owner === username && row.seats_taken === 0);
    close.querySelector("input[name=room]").value = row.id;
  }

  // The query string of a page with the form's filters (also the socket's, on connecting).
  function pageQuery(page) {
    const query = new URLSearchParams(new FormData(filterForm));
    for (const [key, value] of [...query.entries()]) if (!value) query.delete(key);
    if (page > 1) query.set("page", String(page));
    return query;
  }

  function pageHref(page) {
    const query = pageQuery(page).toString();
    return window.location.pathname + (query ? "?" + query : "");
  }

  // Ask the server for a page (with the form's filters) and show it in the address bar.
  function requestPage(page) {
    if (socket === null || socket.readyState !== WebSocket.OPEN) return false;
    const wanted = filters();
    socket.send(
      JSON.stringify({
        type: "snapshot",
        id: nextRequest++,
        page: page,
        base_score: wanted.baseScore,
        seats: wanted.seats,
        free: wanted.free,
        variant: wanted.variant,
      })
    );
    window.history.replaceState(null, "", pageHref(page));
    return true;
  }

  // A short page while more rooms exist: ask for it again, at most once a second.
  function refreshSoon() {
    if (refreshTimer !== null) return;
    refreshTimer = window.setTimeout(() => {
      refreshTimer = null;
      requestPage(view.page);
    }, 1000);
  }

  function ids() {
    return [...rooms.keys()];
  }

  // Whether a room we do not hold belongs on this page (ids are newest first).
  function inPageRange(id) {
    if (rooms.size === 0) return view.page === 1;
    const held = ids();
    const newest = Math.max(...held);
    const oldest = Math.min(...held);
    const lastPage = view.page >= view.pages && rooms.size < view.pageSize;
    return (view.page === 1 || id < newest) && (lastPage || id > oldest);
  }

  function trim() {
    const sorted = ids().sort((a, b) => b - a);
    sorted.slice(view.pageSize).forEach((id) => rooms.delete(id));
  }

  function settleCounts() {
    view.pages = Math.max(1, Math.ceil(view.total / view.pageSize));
    const before = (view.page - 1) * view.pageSize;
    if (rooms.size < view.pageSize && view.total > before + rooms.size) refreshSoon();
    if (rooms.size === 0 && view.page > 1) refreshSoon();
  }

  function renderPager() {
    pager.querySelector(".page-info").textContent = format(strings.page_info, {
      page: number(view.page),
      pages: number(view.pages),
      total: number(view.total),
    });
    const newer = pager.querySelector(".newer");
    const older = pager.querySelector(".older");
    newer.hidden = view.page <= 1;
    newer.href = pageHref(view.page - 1);
    newer.dataset.page = view.page - 1;
    older.hidden = view.page >= view.pages;
    older.href = pageHref(view.page + 1);
    older.dataset.page = view.page + 1;
  }

  function render() {
    const shown = [...rooms.values()].sort((a, b) => b.id - a.id);
    const existing = new Map([...tbody.rows].map((tr) => [Number(tr.dataset.room), tr]));
    shown.forEach((row, index) => {
      let tr = existing.get(row.id);
      if (!tr) tr = rowTemplate.content.firstElementChild.cloneNode(true);
      existing.delete(row.id);
      fillRow(tr, row);
      // Move a row only when it is out of place, so a code being typed keeps its focus.
      if (tbody.rows[index] !== tr) tbody.insertBefore(tr, tbody.rows[index] || null);
    });
    existing.forEach((tr) => tr.remove());
    empty.hidden = shown.length > 0;
    renderPager();
    renderSeat();
  }

  function renderSeat() {
    mySeat.hidden = seat === null;
    if (playNow) playNow.hidden = seat !== null;
    mySeat.dataset.inRound = String(seat !== null && inRound);
    if (seat === null) return;
    mySeat.querySelector(".seat-text").textContent = format(
      inRound ? strings.in_round : strings.seated_at,
      { room: nameOf(seat.room) }
    );
    mySeat.querySelector(".go-table").href = tableUrl(seat.room.id);
    const code = mySeat.querySelector(".seat-code");
    code.hidden = !seat.room.code;
    code.querySelector("code").textContent = seat.room.code || "";
  }

  // A new seat (or none): a player who has just sat down is not in a round yet.
  function setSeat(next) {
    if (next === null || seat === null || next.room.id !== seat.room.id) inRound = false;
    seat = next;
  }

  // Keep our own seat in step with the rows (another tab of ours may have moved us).
  function followSeat(row, closed) {
    const me = closed ? undefined : row.players.find((p) => p.username === username);
    if (me) {
      const code = seat !== null && seat.room.id === row.id ? seat.room.code : null;
      setSeat({ room: Object.assign({}, row, { code: code }), position: me.position });
    } else if (seat !== null && seat.room.id === row.id) {
      setSeat(null);
    }
  }

  // A room event against the page we hold (the rules are at the top of this file).
  function applyRow(row, event) {
    const known = rooms.get(row.id);
    if (known && known.version > row.version) return; // a stale event
    const matching = event !== "room.closed" && matches(row, filters());
    if (known) {
      if (matching) {
        rooms.set(row.id, row);
      } else {
        rooms.delete(row.id);
        view.total = Math.max(0, view.total - 1);
      }
    } else if (event === "room.closed") {
      if (matches(row, filters())) view.total = Math.max(0, view.total - 1);
    } else if (matching) {
      if (event === "room.created") view.total += 1;
      if (inPageRange(row.id)) {
        if (event === "room.updated") view.total += 1; // it has just started to match
        rooms.set(row.id, row);
        trim();
      }
    }
    settleCounts();
  }

  function onRoomEvent(message) {
    applyRow(message.room, message.type);
    followSeat(message.room, message.type === "room.closed");
    render();
  }

  const handlers = {
    snapshot(message) {
      rooms.clear();
      message.rooms.forEach((row) => rooms.set(row.id, row));
      view.page = message.page;
      view.pages = message.pages;
      view.total = message.total;
      view.pageSize = message.page_size;
      setSeat(message.seat);
      inRound = Boolean(message.in_round) && seat !== null;
      render();
      forgetLeftReason();
    },
    "seat.round"(message) {
      inRound = Boolean(message.in_round) && seat !== null;
      renderSeat();
    },
    "room.created": onRoomEvent,
    "room.updated": onRoomEvent,
    "room.closed": onRoomEvent,
    ok(message) {
      setSeat(message.seat);
      const room = message.room || (message.seat && message.seat.room);
      if (message.action === "room.leave") say(format(strings.left, { room: nameOf(room) }));
      else if (message.action === "room.close") say(format(strings.closed, { room: nameOf(room) }));
      else if (message.action === "room.create") say(format(strings.created, { room: nameOf(room) }));
      else if (seat) say(format(strings.seated, { room: nameOf(seat.room), position: seat.position + 1 }));
      render();
      // Seated by this action: on to the table.
      if (seat && ["room.create", "room.join", "room.join_by_code", "room.quick_join"].includes(message.action)) {
        window.location.href = tableUrl(seat.room.id);
      }
    },
    error(message) {
      say(message.error.message, true);
      // Over a rate limit: do not come back before the server says (also after a 4429 close).
      if (message.error.retry_after) {
        retryDelay = Math.max(retryDelay, message.error.retry_after * 1000);
      }
    },
    pong() {},
  };

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    const query = pageQuery(view.page).toString();
    socket = new WebSocket(
      scheme + window.location.host + root.dataset.socket + (query ? "?" + query : "")
    );
    socket.addEventListener("open", () => {
      retryDelay = 1000;
      live.dataset.state = "online";
      live.textContent = strings.connected;
    });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(event.data);
      const handler = handlers[message.type];
      if (handler) handler(message);
    });
    socket.addEventListener("close", () => {
      socket = null;
      live.dataset.state = "offline";
      live.textContent = strings.disconnected;
      window.setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 15000);
    });
  }

  // A form with data-action goes over the socket when it is open; otherwise it posts.
  root.addEventListener("submit", (event) => {
    const form = event.target;
    if (form === filterForm) {
      // Over the socket when it is open; otherwise the form loads the filtered page.
      if (requestPage(1)) event.preventDefault();
      return;
    }
    const action = form.dataset.action;
    if (!action || socket === null || socket.readyState !== WebSocket.OPEN) return;
    event.preventDefault();
    const message = { type: action, id: nextRequest++ };
    new FormData(form).forEach((value, key) => {
      if (key === "csrfmiddlewaretoken") return;
      if (key === "name" && value.trim() === "") return; // the server names the room
      if (key === "series_rounds" && value === "") return; // no series
      message[key] = NUMBER_FIELDS.has(key) && value !== "" ? Number(value) : value;
    });
    const privateBox = form.querySelector("input[name=private]");
    if (privateBox) message.private = privateBox.checked;
    const chatBox = form.querySelector("input[name=chat_text]");
    if (chatBox) message.chat_text = chatBox.checked;
    const watchBox = form.querySelector("input[name=spectators]");
    if (watchBox) message.spectators = watchBox.checked;
    socket.send(JSON.stringify(message));
  });
  filterForm.addEventListener("change", () => filterForm.requestSubmit());
  // The pager's links: over the socket when it is open, else an ordinary page load.
  pager.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-page]");
    if (link && requestPage(Number(link.dataset.page))) event.preventDefault();
  });
  renderPager();

  connect();
})();

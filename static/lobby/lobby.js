// The live lobby: keeps the room list current over ws/lobby/ and sends the page's forms over
// the socket while it is open (the forms still post normally when it is not).
// Protocol: lobby/consumers.py. No framework, no build step.
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
  const NUMBER_FIELDS = new Set(["base_score", "seats", "room", "rules"]);

  const rooms = new Map(); // room id -> its public row (as in the events)
  let seat = JSON.parse(document.getElementById("lobby-seat").textContent); // or null
  let socket = null;
  let retryDelay = 1000;
  let nextRequest = 1;

  function format(template, params) {
    return template.replace(/%\((\w+)\)s/g, (_, key) => String(params[key]));
  }

  // The table page of a room (the page gives the URL of room 0).
  function tableUrl(roomId) {
    return root.dataset.tableUrl.replace(/\/0\/$/, "/" + roomId + "/");
  }

  function number(value) {
    return Number(value).toLocaleString(lang);
  }

  function say(message, isError) {
    flash.textContent = message;
    flash.classList.toggle("error", Boolean(isError));
    flash.hidden = false;
  }

  // The filters apply to the rows we hold, so changing them needs no request.
  function filters() {
    const data = new FormData(filterForm);
    return {
      baseScore: data.get("base_score") ? Number(data.get("base_score")) : null,
      seats: data.get("seats") ? Number(data.get("seats")) : null,
      free: data.get("free") === "on",
    };
  }

  function matches(row, wanted) {
    if (wanted.baseScore !== null && row.base_score !== wanted.baseScore) return false;
    if (wanted.seats !== null && row.seats !== wanted.seats) return false;
    if (wanted.free && row.seats_taken >= row.seats) return false;
    return true;
  }

  function fillRow(tr, row) {
    const full = row.seats_taken >= row.seats;
    const mine = seat !== null && seat.room.id === row.id;
    tr.dataset.room = row.id;
    tr.dataset.version = row.version;
    tr.querySelector("[data-field=name]").textContent = row.name;
    tr.querySelector(".private-marker").hidden = !row.private;
    tr.querySelector("[data-field=rules]").textContent = row.rules.name;
    tr.querySelector("[data-field=base_score]").textContent = number(row.base_score);
    tr.querySelector("[data-field=seats]").textContent = row.seats_taken + " / " + row.seats;
    tr.querySelector("[data-field=entry_minimum]").textContent = number(row.entry_minimum);
    tr.querySelector("[data-field=players]").textContent = row.players
      .map((p) => (p.username === username ? p.username + " (" + strings.you + ")" : p.username))
      .join(", ");
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

  function render() {
    const wanted = filters();
    const shown = [...rooms.values()]
      .filter((row) => matches(row, wanted))
      .sort((a, b) => a.id - b.id);
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
    renderSeat();
  }

  function renderSeat() {
    mySeat.querySelector("[data-when=seated]").hidden = seat === null;
    mySeat.querySelector("[data-when=free]").hidden = seat !== null;
    if (seat === null) return;
    mySeat.querySelector(".seat-text").textContent = format(strings.seated, {
      room: seat.room.name,
      position: seat.position + 1,
    });
    mySeat.querySelector(".go-table").href = tableUrl(seat.room.id);
    const code = mySeat.querySelector(".seat-code");
    code.hidden = !seat.room.code;
    code.querySelector("code").textContent = seat.room.code || "";
  }

  // Keep our own seat in step with the rows (another tab of ours may have moved us).
  function followSeat(row, closed) {
    const me = closed ? undefined : row.players.find((p) => p.username === username);
    if (me) {
      const code = seat !== null && seat.room.id === row.id ? seat.room.code : null;
      seat = { room: Object.assign({}, row, { code: code }), position: me.position };
    } else if (seat !== null && seat.room.id === row.id) {
      seat = null;
    }
  }

  function upsert(row) {
    const known = rooms.get(row.id);
    if (known && known.version > row.version) return; // a stale event
    rooms.set(row.id, row);
    followSeat(row, false);
  }

  const handlers = {
    snapshot(message) {
      rooms.clear();
      message.rooms.forEach((row) => rooms.set(row.id, row));
      seat = message.seat;
      render();
    },
    "room.created"(message) {
      upsert(message.room);
      render();
    },
    "room.updated"(message) {
      upsert(message.room);
      render();
    },
    "room.closed"(message) {
      rooms.delete(message.room.id);
      followSeat(message.room, true);
      render();
    },
    ok(message) {
      seat = message.seat;
      const room = message.room || (message.seat && message.seat.room);
      if (message.action === "room.leave") say(format(strings.left, { room: room.name }));
      else if (message.action === "room.close") say(format(strings.closed, { room: room.name }));
      else if (message.action === "room.create") say(format(strings.created, { room: room.name }));
      else if (seat) say(format(strings.seated, { room: seat.room.name, position: seat.position + 1 }));
      render();
      // Seated by this action: on to the table.
      if (seat && ["room.create", "room.join", "room.join_by_code", "room.quick_join"].includes(message.action)) {
        window.location.href = tableUrl(seat.room.id);
      }
    },
    error(message) {
      say(message.error.message, true);
    },
    pong() {},
  };

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + root.dataset.socket);
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
      event.preventDefault();
      const query = new URLSearchParams(new FormData(filterForm));
      for (const [key, value] of [...query.entries()]) if (!value) query.delete(key);
      window.history.replaceState(null, "", "?" + query.toString());
      render();
      return;
    }
    const action = form.dataset.action;
    if (!action || socket === null || socket.readyState !== WebSocket.OPEN) return;
    event.preventDefault();
    const message = { type: action, id: nextRequest++ };
    new FormData(form).forEach((value, key) => {
      if (key === "csrfmiddlewaretoken") return;
      message[key] = NUMBER_FIELDS.has(key) && value !== "" ? Number(value) : value;
    });
    const privateBox = form.querySelector("input[name=private]");
    if (privateBox) message.private = privateBox.checked;
    socket.send(JSON.stringify(message));
  });
  filterForm.addEventListener("change", () => filterForm.requestSubmit());

  connect();
})();

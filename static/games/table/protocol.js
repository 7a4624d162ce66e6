// The table socket's client (docs/protocol.md): `hello` with the last version applied
// (`since`), a ping every 20 s, the final close codes and the flood cool-down (4429), actions
// by id. No DOM: what arrives goes to the callbacks.
// Reconnecting is quick because a hosted hand waits only `reconnect_grace_seconds` (RULES.md
// §9): a back-off from 250 ms, doubling to 4 s, with jitter, and an attempt at once when the
// browser says the network is back (`online`) or the page is shown again. One socket at a
// time: never two attempts in flight.

const FINAL_CLOSE = { 4000: "left", 4401: "login", 4403: "not_seated" };
const PING_MS = 20000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 4000;
const FLOOD_WAIT_MS = 5000;
// A socket not open by then is given up (a handshake that hangs while the network is down).
const OPEN_TIMEOUT_MS = 3000;

// The wait before the next attempt: `delay` less up to a quarter of it at random, so that a
// table's players dropped together do not come back in step.
export function jittered(delay, random = Math.random) {
  return Math.round(delay * (1 - 0.25 * random()));
}

// options: {url (path of ws/table/<room_id>/), since() -> version or null,
//   onWelcome(message), onEvents(events), onOk(message, actionType),
//   onError(message, actionType), onSuggestions(message), onReconnecting(), onFinalClose(reason)}
export function createConnection(options) {
  let socket = null;
  let retryDelay = FIRST_RETRY_MS;
  let retryTimer = null;
  // Not before this time (ms): the server's flood cool-down, which `online` does not cut short.
  let notBefore = 0;
  let pingTimer = null;
  let openTimer = null;
  let nextId = 1;
  let stopped = false;
  // The server's cool-down (ms) named by the last `rate_limited` error, for the reconnect.
  let coolDownMs = 0;
  const pendingActions = new Map(); // id -> type

  function connect() {
    if (stopped || socket) return; // one socket (open or opening) at a time
    clearTimeout(retryTimer);
    retryTimer = null;
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    let ws;
    try {
      ws = new WebSocket(scheme + window.location.host + options.url);
    } catch (e) {
      closed(null); // refused at once (e.g. by the browser): tried again like a close
      return;
    }
    socket = ws;
    openTimer = setTimeout(() => giveUp(ws), OPEN_TIMEOUT_MS);
    ws.addEventListener("open", () => {
      if (ws !== socket) return;
      clearTimeout(openTimer);
      retryDelay = FIRST_RETRY_MS;
      send({ type: "hello", id: "hello-" + nextId++, since: options.since() || null });
      clearInterval(pingTimer);
      pingTimer = setInterval(() => send({ type: "ping", id: "ping-" + nextId++ }), PING_MS);
    });
    ws.addEventListener("message", (event) => {
      if (ws !== socket) return;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      receive(message);
    });
    ws.addEventListener("close", (event) => {
      if (ws === socket) closed(event.code);
    });
  }

  // A socket still opening after OPEN_TIMEOUT_MS: closed, and the next attempt scheduled.
  function giveUp(ws) {
    if (ws !== socket || ws.readyState !== WebSocket.CONNECTING) return;
    ws.close();
    closed(null);
  }

  function closed(code) {
    socket = null;
    clearTimeout(openTimer);
    clearInterval(pingTimer);
    if (FINAL_CLOSE[code]) {
      options.onFinalClose(FINAL_CLOSE[code]);
      return;
    }
    options.onReconnecting();
    // Closed for flooding (4429): wait out the cool-down the server named, if it did.
    const wait = code === 4429 ? Math.max(retryDelay, coolDownMs || FLOOD_WAIT_MS) : jittered(retryDelay);
    notBefore = code === 4429 ? Date.now() + wait : 0;
    coolDownMs = 0;
    retryDelay = Math.min(retryDelay * 2, MAX_RETRY_MS);
    if (!stopped) retryTimer = setTimeout(connect, wait);
  }

  // The network is back or the page is shown again: try now rather than at the next retry
  // (nothing to do while a socket is open, or during a flood cool-down). A socket still
  // opening began while the network was down: it is replaced.
  function connectNow() {
    if (stopped || Date.now() < notBefore) return;
    if (socket && socket.readyState === WebSocket.CONNECTING) {
      const ws = socket;
      socket = null;
      clearTimeout(openTimer);
      ws.close();
    }
    if (socket) return;
    retryDelay = FIRST_RETRY_MS;
    connect();
  }

  window.addEventListener("online", connectNow);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") connectNow();
  });

  function receive(message) {
    if (message.type === "welcome") options.onWelcome(message);
    else if (message.type === "events") options.onEvents(message.events);
    else if (message.type === "suggestions") {
      // The reply to `suggest` (spare cards): suggestions for the 13 cards kept.
      pendingActions.delete(message.id);
      if (options.onSuggestions) options.onSuggestions(message);
    }
    else if (message.type === "hand_suggestions") {
      // The deal's suggestions for the hand, a moment after it (the hand came without them).
      if (options.onHandSuggestions) options.onHandSuggestions(message);
    }
    else if (message.type === "ok") {
      const type = pendingActions.get(message.id);
      pendingActions.delete(message.id);
      options.onOk(message, type);
    } else if (message.type === "error") {
      const type = pendingActions.get(message.id);
      pendingActions.delete(message.id);
      const error = message.error || {};
      if (type !== "draft" && error.code === "rate_limited" && typeof error.retry_after === "number") {
        coolDownMs = Math.ceil(error.retry_after * 1000);
      }
      options.onError(message, type);
    }
    // pong: nothing to do
  }

  function send(message) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  // An action {type, id, ...fields}; false when it could not be sent (not connected).
  function act(type, fields) {
    const id = type + "-" + Date.now().toString(36) + "-" + nextId++;
    pendingActions.set(id, type);
    return send(Object.assign({ type, id }, fields || {}));
  }

  // No more reconnecting (the table is closed for good).
  function stop() {
    stopped = true;
    clearTimeout(retryTimer);
  }

  return { connect, act, stop };
}

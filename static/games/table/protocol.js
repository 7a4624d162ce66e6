// The table socket's client (docs/protocol.md): `hello` with the last version applied
// (`since`), a ping every 20 s, reconnection with back-off, the final close codes and the
// flood cool-down (4429), actions by id. No DOM: what arrives goes to the callbacks.

const FINAL_CLOSE = { 4000: "left", 4401: "login", 4403: "not_seated" };
const PING_MS = 20000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 15000;

// options: {url (path of ws/table/<room_id>/), since() -> version or null,
//   onWelcome(message), onEvents(events), onOk(message, actionType),
//   onError(message, actionType), onSuggestions(message), onReconnecting(), onFinalClose(reason)}
export function createConnection(options) {
  let socket = null;
  let retryDelay = FIRST_RETRY_MS;
  let pingTimer = null;
  let nextId = 1;
  let stopped = false;
  // The server's cool-down (ms) named by the last `rate_limited` error, for the reconnect.
  let coolDownMs = 0;
  const pendingActions = new Map(); // id -> type

  function connect() {
    if (stopped) return;
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + options.url);
    socket.addEventListener("open", () => {
      retryDelay = FIRST_RETRY_MS;
      send({ type: "hello", id: "hello-" + nextId++, since: options.since() || null });
      clearInterval(pingTimer);
      pingTimer = setInterval(() => send({ type: "ping", id: "ping-" + nextId++ }), PING_MS);
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (e) {
        return;
      }
      receive(message);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      clearInterval(pingTimer);
      if (FINAL_CLOSE[event.code]) {
        options.onFinalClose(FINAL_CLOSE[event.code]);
        return;
      }
      options.onReconnecting();
      // Closed for flooding (4429): wait out the cool-down the server named, if it did.
      const wait = event.code === 4429 ? Math.max(retryDelay, coolDownMs || 5000) : retryDelay;
      coolDownMs = 0;
      setTimeout(connect, wait);
      retryDelay = Math.min(retryDelay * 2, MAX_RETRY_MS);
    });
  }

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
  }

  return { connect, act, stop };
}

// Table chat: quick phrases, reactions and, where the room allows it, short free
// text. A message is a public `chat` event ({position, kind, value}); it floats over the
// sender's seat for a moment and goes into the chat log. Everything is put on the page as text
// (textContent), never as markup. A player can mute another: the muted player's messages are
// not shown (kept in localStorage, by user id, for every table).
import { _, fmt, $, el, lang } from "./common.js";

const MUTE_KEY = "shisanshui.chat.muted";
const LOG_SIZE = 40;
const BUBBLE_MS = 4000;
const CHINESE = (lang || "").toLowerCase().startsWith("zh");

function muted() {
  try {
    return new Set(JSON.parse(localStorage.getItem(MUTE_KEY) || "[]").map(String));
  } catch (e) {
    return new Set();
  }
}

function setMuted(player, on) {
  const set = muted();
  if (on) set.add(String(player));
  else set.delete(String(player));
  localStorage.setItem(MUTE_KEY, JSON.stringify([...set]));
}

// What a message says, in the page's language.
export function chatText(cfg, kind, value) {
  if (kind === "phrase") {
    const phrase = cfg.chat.phrases[value];
    return phrase ? (CHINESE ? phrase.zh : phrase.en) : "";
  }
  if (kind === "reaction") return cfg.chat.reactions[value] || "";
  return String(value || "");
}

export function setUpChat(ctx, act) {
  const panel = $("chat-panel");
  const toggle = $("chat-toggle");
  toggle.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    toggle.setAttribute("aria-expanded", String(!panel.hidden));
    // Open, the panel is docked beside the page (table-chat.css), never over its controls.
    document.body.classList.toggle("chat-open", !panel.hidden);
    ctx.ui.chatUnread = 0;
    renderChat(ctx);
  });
  panel.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-phrase], button[data-reaction]");
    if (!button) return;
    if (button.dataset.phrase) act("chat", { kind: "phrase", value: button.dataset.phrase });
    else act("chat", { kind: "reaction", value: button.dataset.reaction });
  });
  const form = $("chat-form"); // a spectator only reads
  if (form) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const input = $("chat-input");
      const text = input.value.trim();
      if (!text) return;
      if (act("chat", { kind: "text", value: text })) input.value = "";
    });
  }
  $("chat-mutes").addEventListener("change", (event) => {
    const box = event.target.closest("input[data-player]");
    if (!box) return;
    setMuted(box.dataset.player, box.checked);
    renderChat(ctx);
  });
}

// A `chat` event: into the log, and over the sender's seat (unless the sender is muted).
export function onChat(ctx, payload) {
  const state = ctx.state;
  const seat = state.table.seats[payload.position];
  const player = seat ? seat.player : null;
  if (player !== null && muted().has(String(player))) return;
  const text = chatText(ctx.cfg, payload.kind, payload.value);
  if (!text) return;
  const log = $("chat-log");
  const line = el("li", "chat-line chat-" + payload.kind);
  line.dataset.position = payload.position;
  line.setAttribute("data-testid", "chat-line");
  line.append(el("span", "chat-who", ctx.words.nameOf(payload.position)), el("span", "chat-what", text));
  log.append(line);
  while (log.children.length > LOG_SIZE) log.firstElementChild.remove();
  log.scrollTop = log.scrollHeight;
  if ($("chat-panel").hidden && payload.position !== state.me) ctx.ui.chatUnread = (ctx.ui.chatUnread || 0) + 1;
  bubble(payload.position, text, payload.kind);
  renderChat(ctx);
}

function bubble(position, text, kind) {
  const layer = $("chat-bubbles");
  const felt = $("felt");
  const seat = felt.querySelector(`.seat[data-position="${position}"]`);
  if (!seat) return;
  layer.querySelectorAll(`[data-position="${position}"]`).forEach((old) => old.remove());
  const node = el("div", "chat-bubble chat-" + kind, text);
  node.dataset.position = position;
  node.setAttribute("data-testid", "chat-bubble");
  const box = felt.getBoundingClientRect();
  const at = seat.getBoundingClientRect();
  node.style.left = `${at.left - box.left + at.width / 2}px`;
  node.style.top = `${at.top - box.top}px`;
  layer.append(node);
  setTimeout(() => node.remove(), BUBBLE_MS);
}

// The text box where the room allows free text; the mute list of the other players; the count
// of unread messages on the chat button.
export function renderChat(ctx) {
  const state = ctx.state;
  const form = $("chat-form");
  if (form) form.hidden = state.table.chat_text === false;
  $("chat-text-off").hidden = state.table.chat_text !== false;
  const unread = ctx.ui.chatUnread || 0;
  const badge = $("chat-unread");
  badge.hidden = unread === 0;
  badge.textContent = String(unread);
  const list = $("chat-mutes");
  const others = Object.values(state.table.seats).filter((s) => s.position !== state.me);
  const key = others.map((s) => s.player + ":" + ctx.words.nameOf(s.position)).join(",") + "|" + [...muted()].join(",");
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.textContent = "";
  const off = muted();
  others.forEach((s) => {
    const label = el("label", "check");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.dataset.player = s.player;
    box.setAttribute("data-testid", "chat-mute");
    box.checked = off.has(String(s.player));
    label.append(box, " ", fmt(_("Mute %(name)s"), { name: ctx.words.nameOf(s.position) }));
    list.append(label);
  });
}

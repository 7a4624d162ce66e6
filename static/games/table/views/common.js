// Shared by the views: gettext (window.gettext / window.interpolate from /jsi18n/, a classic
// script loaded before the modules), the card drawing of cards.js (window.ShisanshuiCards),
// numbers in the page's language and small DOM helpers.

export const C = window.ShisanshuiCards;
export const gettext = window.gettext || ((s) => s);
const interpolate =
  window.interpolate || ((text, obj) => text.replace(/%\((\w+)\)s/g, (_m, k) => String(obj[k])));
export const _ = gettext;
export const fmt = (text, params) => interpolate(text, params, true);
export const lang = document.documentElement.lang || undefined;
export const $ = (id) => document.getElementById(id);

export const ROW_NAMES = { front: _("Front"), middle: _("Middle"), back: _("Back") };

// Category and special names in the page's language only (the other is its title).
const CHINESE = (lang || "").toLowerCase().startsWith("zh");
export function bilingual(info) {
  if (!info) return "";
  return CHINESE ? info.zh : info.en;
}

export function number(value) {
  return Number(value).toLocaleString(lang);
}

export function signed(value) {
  return (value > 0 ? "+" : "") + number(value);
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

let toastTimer = null;
export function toast(message, isError) {
  const box = $("toast");
  box.textContent = message;
  box.classList.toggle("error", Boolean(isError));
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), 4000);
}

// Names and words that need the page's config and the current state.
export function makeWords(cfg, getState) {
  const nameOf = (position) => {
    const state = getState();
    const name = state.names[position] || (state.goneNames || {})[position];
    return name || fmt(_("Seat %(n)s"), { n: Number(position) + 1 });
  };
  const categoryName = (id) => bilingual(cfg.categories[id]) || id;
  const specialName = (id) => bilingual(cfg.specials[id]) || id;
  return { nameOf, categoryName, specialName };
}

// The review of one's own hand in a settled round, shared by the table's settlement
// panel and the replay page: GET /api/games/…/review/ (games/apis.py), drawn as "You played"
// beside "The engine's best" — the rows, the model's expected water against this round's
// opponents, and the water each scored (or would have scored) against the round's real hands —
// with one line saying what it means. Cards are drawn by cards.js (window.ShisanshuiCards);
// strings come from /jsi18n/. A classic script: window.ShisanshuiReview.load(url, box, opts).
(function () {
  "use strict";

  const gettext = window.gettext || ((s) => s);
  const interpolate =
    window.interpolate || ((text, obj) => text.replace(/%\((\w+)\)s/g, (_m, k) => String(obj[k])));
  const _ = gettext;
  const fmt = (text, params) => interpolate(text, params, true);
  const lang = document.documentElement.lang || undefined;
  const ROWS = ["front", "middle", "back"];
  const ROW_NAMES = { front: _("Front"), middle: _("Middle"), back: _("Back") };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function signed(value) {
    const n = Math.round(Number(value) * 100) / 100;
    return (n > 0 ? "+" : "") + n.toLocaleString(lang, { maximumFractionDigits: 2 });
  }

  function cards(list, jokers) {
    const C = window.ShisanshuiCards;
    const box = el("div", "mini-cards");
    (list || []).forEach((card) => {
      const stands = jokers && jokers[card];
      box.append(C ? C.cardElement(card, stands ? { small: true, stands } : { small: true }) : el("span", "", card + " "));
    });
    return box;
  }

  function option(data, title, testid, specialName) {
    const section = el("section", "review-option");
    section.dataset.testid = testid;
    section.append(el("h4", "", title));
    if (data.special) {
      section.append(el("p", "special-tag", specialName(data.special)));
      section.append(cards(data.cards));
    } else {
      ROWS.forEach((row) => {
        const line = el("div", "review-row");
        line.append(el("span", "review-row-name", ROW_NAMES[row]));
        line.append(cards(data[row], data.jokers));
        section.append(line);
      });
    }
    if (data.unused && data.unused.length) {
      const aside = el("div", "review-row aside");
      aside.append(el("span", "review-row-name", _("Set aside")));
      aside.append(cards(data.unused));
      section.append(aside);
    }
    const expected = el("p", "review-figure", fmt(_("Expected: %(water)s water"), { water: signed(data.expected_water) }));
    expected.dataset.testid = testid + "-expected";
    const water = el("p", "review-figure strong", fmt(_("Against this round's hands: %(water)s water"), { water: signed(data.water) }));
    water.dataset.testid = testid + "-water";
    section.append(expected, water);
    return section;
  }

  function verdict(review) {
    const e = signed(review.expected_gain);
    const n = Math.abs(review.water_gain);
    if (review.played_best) return _("You played the engine's best arrangement.");
    if (review.water_gain > 0)
      return fmt(_("Against these hands the best arrangement would have scored %(n)s more water (and is expected to win %(e)s more on average)."), { n, e });
    if (review.water_gain < 0)
      return fmt(_("Against these hands your arrangement scored %(n)s more water than the best one — a lucky choice: the best is expected to win %(e)s more on average."), { n, e });
    return fmt(_("Against these hands both score the same; the best is expected to win %(e)s more on average."), { e });
  }

  function render(box, review, opts) {
    const specialName = (opts && opts.specialName) || ((id) => id);
    box.textContent = "";
    box.hidden = false;
    const wrap = el("div", "review");
    wrap.dataset.testid = "review";
    wrap.append(el("h3", "", _("Review of your hand")));
    const both = el("div", "review-options");
    both.append(option(review.played, _("You played"), "review-played", specialName));
    both.append(option(review.best, _("The engine's best"), "review-best", specialName));
    wrap.append(both);
    const line = el("p", "review-verdict", verdict(review));
    line.dataset.testid = "review-verdict";
    wrap.append(line);
    box.append(wrap);
  }

  // Fetches the review and draws it in `box`; a refusal is said in the box.
  async function load(url, box, opts) {
    box.hidden = false;
    box.textContent = _("Loading…");
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      const body = await response.json();
      if (!response.ok) {
        const message = (body && body.error && body.error.message) || _("The review is not available.");
        box.textContent = "";
        const p = el("p", "error", message);
        p.dataset.testid = "review-error";
        box.append(p);
        return null;
      }
      render(box, body, opts);
      return body;
    } catch (_err) {
      box.textContent = _("The review is not available.");
      return null;
    }
  }

  window.ShisanshuiReview = { load, render };
})();

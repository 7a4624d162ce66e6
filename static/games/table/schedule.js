// The deal's and the comparison's animation, at their moments in server time: each card of my
// hand lands (the first with the deal's sound), each step of the comparison shows with its
// effect. A new round, a settlement or a snapshot overtakes what has not played yet.

import * as S from "./state.js";
import { landCard } from "./views/arrange.js";
import { playEffect, sound, stopEffects } from "./views/compare.js";

// page: the page's context (state, skew, nowSec(), words, render()).
export function createSchedule(page) {
  let timers = [];
  // The animation steps played so far: the comparison is shown up to `compareReached` ms and
  // my cards up to `dealReached` ms (the timers below move them; a flush moves them to the end).
  let compareReached = -Infinity;
  let dealReached = -Infinity;
  let dealFallbackStart = null; // when a hand came without the deal's start (never, normally)

  // Run fn at the server time `epoch` (seconds) + `offsetMs`; at once if that has passed
  // (fn(true) when a flush runs it before its time).
  function at(epoch, offsetMs, fn) {
    const due = (epoch - page.skew) * 1000 + (offsetMs || 0);
    const id = setTimeout(() => {
      timers = timers.filter((t) => t.id !== id);
      fn();
    }, Math.max(0, due - Date.now()));
    timers.push({ id, fn });
  }

  function scheduleDeal() {
    const state = page.state;
    const dealing = state.dealing;
    const start = dealing.start || dealFallbackStart || page.nowSec();
    dealFallbackStart = start;
    const hand = state.you.hand;
    hand.forEach((card, i) => {
      const offset = dealing.offsets_ms[i] || 0;
      at(start, offset, () => {
        if (i === 0) sound("deal");
        dealReached = Math.max(dealReached, offset);
        landCard(page, card);
      });
    });
  }

  return {
    // The comparison as far as it has played; my cards that have landed.
    view: () => S.compareAt(page.state, compareReached),
    landed: () => new Set(S.landedAt(page.state, dealReached)),
    // Play every pending animation step now (a new round or a settlement overtakes them),
    // without their effects, and end the one playing: a gun would cover the settlement.
    flush() {
      stopEffects();
      const pending = timers;
      timers = [];
      pending.forEach((t) => {
        clearTimeout(t.id);
        t.fn(true);
      });
    },
    // Drop the pending steps unplayed (a snapshot replaces the state they were for).
    cancel() {
      timers.forEach((t) => clearTimeout(t.id));
      timers = [];
    },
    // Nothing of the round played yet (a snapshot, a new round).
    rewind() {
      compareReached = -Infinity;
      dealReached = -Infinity;
    },
    // My new hand's cards land at their offsets from the deal's start.
    deal() {
      dealReached = -Infinity;
      dealFallbackStart = null;
      scheduleDeal();
    },
    // A timed event of the comparison shows at its moment, with its effect.
    compare(entry) {
      at(page.state.table.started_at, entry.at, (overtaken) => {
        compareReached = Math.max(compareReached, entry.at);
        const fx = S.effectOf(entry);
        if (fx && !overtaken) playEffect(fx, page.words);
        page.render();
      });
    },
    // The whole comparison shown (the settlement has come).
    finish() {
      compareReached = Infinity;
    },
  };
}

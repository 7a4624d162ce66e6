// The page's socket (protocol.js) wired to the page: the welcome, the events and the replies
// to actions applied, actions sent, the server's errors worded in a toast, and the page closed
// for good when the table is done with this player (sent away, logged out, not seated).

import * as S from "./state.js";
import { createConnection } from "./protocol.js";
import { _, fmt, number, toast } from "./views/common.js";
import { showClosed, setConnection } from "./views/dialogs.js";

// Reasons the lobby explains (?left=…) when the table sends a player back to the room list.
const LOBBY_REASONS = [
  "ready_timeout",
  "escaped",
  "insufficient_coins",
  "transfers_frozen",
  "left",
  "match_over",
];
// Reasons the socket may give for a seat that is gone when the page comes back to it (its
// refusal, 4403): the lobby says them (?left=…).
const GONE_REASONS = LOBBY_REASONS.concat(["escaped_disconnected"]);

function coinText(value) {
  return typeof value === "number" ? number(value) : "?";
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
      { minimum: coinText(error.minimum), balance: coinText(error.balance) },
    ),
    transfers_frozen: _(
      "Your account's transfers are frozen pending a review by support: you cannot play until the review is over.",
    ),
    rate_limited: _("Too many requests. Wait a moment and try again."),
    bad_chat: error.max_marks
      ? fmt(_("A character can carry at most %(max)s accents or marks."), { max: error.max_marks })
      : error.reason === "invisible"
        ? _("This message shows nothing: write something visible.")
        : error.message,
    server_error: _("Something went wrong. Try again."),
  };
  return known[error.code] || error.message || error.code;
}

// page: the page's context; parts: {server, storage, controls}.
export function createSocket(page, { server, storage, controls }) {
  const { cfg, root, ui } = page;

  const connection = createConnection({
    url: cfg.ws_url,
    since: () => page.state.table.version || null,
    onWelcome(message) {
      if (!cfg.spectator && message.position === null) {
        // My seat is gone (a room that may be watched welcomes me as a watcher): why, if the
        // table sent me away while this page was not connected.
        ui.goneReason = GONE_REASONS.includes(message.sent_away) ? message.sent_away : null;
        closeForGood("not_seated");
        return;
      }
      setConnection(root, "live");
      // A `suggest` asked on a socket that dropped is never answered: forget it and ask again
      // for the cards then kept (not "Finding suggestions…" for good).
      if (ui.suggestPending) {
        ui.suggestAsked.delete(ui.suggestPending.key);
        ui.suggestPending = null;
      }
      const before = page.state.layout;
      if (message.snapshot) server.applySnapshot(message.snapshot);
      else server.applyEvents(message.events || []);
      controls.resumeDraft(before);
      controls.askSuggestions();
    },
    onEvents: (events) => server.applyEvents(events),
    onHandSuggestions(message) {
      // The deal's, a moment after the hand (or after a welcome that did not bring them).
      page.state = S.withHandSuggestions(page.state, message);
      page.render();
    },
    onSuggestions(message) {
      page.state = S.withSuggested(page.state, message);
      if (ui.suggestPending && ui.suggestPending.key === S.cardsKey(message.cards || [])) ui.suggestPending = null;
      page.render();
    },
    onOk(message, type) {
      const state = page.state;
      if (type === "submit") ui.submitting = false;
      if (type === "draft") controls.draftAnswered(true);
      if (type === "leave" && !S.inRound(state)) ui.leaving = true;
      if (type === "leave" && S.inRound(state)) {
        const seat = S.mySeat(state);
        if (seat && S.committed(seat)) {
          // The hand is in: nothing to wait for here, no penalty.
          ui.leaving = true;
          window.location.href = cfg.lobby_url;
          return;
        }
        // An escape: the round is played out without the player, who asked to go.
        ui.leaving = true;
        window.location.href = cfg.lobby_url + "?left=escaping";
        return;
      }
      page.render();
    },
    onError(message, type) {
      const error = message.error || {};
      if (error.code === "not_seated") {
        // The seat is gone (the socket closes next, 4403): why, if the table sent me away.
        ui.goneReason = GONE_REASONS.includes(error.reason) ? error.reason : null;
        return;
      }
      if (type === "submit") ui.submitting = false;
      if (type === "draft") {
        controls.draftAnswered(false, error);
        return;
      }
      if (type === "suggest") {
        // No suggestions for these 13 cards: none are shown (not asked again).
        const asked = ui.suggestPending;
        ui.suggestPending = null;
        if (asked) page.state = S.withSuggested(page.state, { cards: asked.cards, suggestions: [] });
        if (error.code === "rate_limited") toast(errorText(error), true);
        page.render();
        return;
      }
      if (error.code === "foul") {
        ui.serverFoul = error.rows || [];
        page.render();
      }
      if (error.code === "not_at_table") closeForGood("left");
      toast(errorText(error), true);
      page.render();
    },
    onReconnecting: () => setConnection(root, "reconnecting"),
    onFinalClose: (reason) => closeForGood(reason),
  });

  function act(type, fields) {
    const ok = connection.act(type, fields);
    if (!ok && type !== "draft") toast(_("Not connected. Trying again…"), true);
    return ok;
  }

  function closeForGood(reason) {
    page.state = S.markClosed(page.state);
    connection.stop();
    storage.forget();
    const table = page.state.table;
    const sentAway = page.state.sentAway;
    const unread = Boolean(table.result) && ui.settlementSeen < table.round_no;
    if (reason === "left" && ui.leaving && table.phase !== "comparing") {
      window.location.href = cfg.lobby_url;
      return;
    }
    if (reason === "not_seated" && ui.goneReason) {
      // Sent away while this page was not connected: the lobby says why.
      storage.markSettlementSeen(page);
      window.location.href = cfg.lobby_url + "?left=" + encodeURIComponent(ui.goneReason);
      return;
    }
    let href = null;
    if (reason === "left" && sentAway && LOBBY_REASONS.includes(sentAway.reason) && !ui.leaving) {
      // Sent back to the room list by the table: the lobby says why. The settlement of the
      // round just played stays readable here first when there is one to read.
      const url = cfg.lobby_url + "?left=" + encodeURIComponent(sentAway.reason);
      if (["ready_timeout", "match_over"].includes(sentAway.reason) || !unread) {
        storage.markSettlementSeen(page);
        window.location.href = url;
        return;
      }
      href = url;
    }
    const why = {
      left:
        sentAway && sentAway.reason === "insufficient_coins"
          ? fmt(
              _("You went back to the room list: this table needs at least %(minimum)s coins and you have %(balance)s."),
              { minimum: coinText(sentAway.minimum), balance: coinText(sentAway.balance) },
            )
          : _("You are no longer at this table."),
      login: _("You are logged out. Log in again."),
      not_seated: _("You are not seated at this table."),
    }[reason];
    setConnection(root, "closed", _("Closed"));
    showClosed(why, href);
    page.render();
  }

  return { act, connect: () => connection.connect() };
}

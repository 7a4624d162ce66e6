// What the page asks the site's HTTP API: the wallet after a settlement (the socket says what
// the round moved, the wallet what the balance is), and the usernames of seats the page does
// not know (the room's public row).

import * as S from "./state.js";
import { number } from "./views/common.js";

// page: the page's context (cfg, root, state, ui, render()).
export function createApi(page) {
  let fetchingNames = false;

  function setBalance(value) {
    page.ui.balance = value;
    const node = page.root.querySelector("[data-testid=my-balance]");
    node.dataset.balance = String(value);
    node.textContent = number(value);
    const header = document.querySelector("[data-header-balance]");
    if (header) header.textContent = number(value);
  }

  // The wallet after a settlement: asked from the server (a reload may already include it);
  // `delta`: what the round moved it by (the round's delta less the table fee), the guess if
  // the server does not answer.
  function refreshBalance(delta) {
    const guess = page.ui.balance + delta;
    fetch(page.cfg.wallet_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((wallet) => setBalance(wallet && Number.isInteger(wallet.balance) ? wallet.balance : guess))
      .catch(() => setBalance(guess))
      .finally(() => page.render());
  }

  // Usernames of seats the page did not know: the room's public row has them.
  function missingNames() {
    const unknown = Object.keys(page.state.table.seats).some((p) => !page.state.names[p]);
    if (!unknown || fetchingNames) return;
    fetchingNames = true;
    fetch(page.cfg.room_api, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((r) => (r.ok ? r.json() : null))
      .then((room) => {
        if (room && room.players) {
          const found = {};
          room.players.forEach((pl) => (found[pl.position] = pl.name || pl.username));
          page.state = S.withNames(page.state, found);
        }
        page.render();
      })
      .catch(() => {})
      .finally(() => (fetchingNames = false));
  }

  return { setBalance, refreshBalance, missingNames };
}

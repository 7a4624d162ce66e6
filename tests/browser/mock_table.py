"""A table page whose WebSocket is served by the test: the pure table machine
(games.table, driven like tests/games/table/helpers.Game) plays the round, and what the
consumer would send — a welcome snapshot from ``snapshot_for``, then each transition's events
the player may see — goes to the page through Playwright's ``route_web_socket``. So a browser
test can put any hand on the table (a gun, a home run, a run-over) and choose when each event
arrives, with no server process in the way; the page itself is the real one, from the live
platform, for a player seated there in the database.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from typing import Any

from playwright.sync_api import Page, WebSocketRoute

from games.rules.cards import Card
from games.rules.config import RuleConfig
from games.table import machine
from games.table.events import Event, Transition
from games.table.perspective import delivered, events_for, snapshot_for
from tests.games.table.helpers import Game

SOCKET = re.compile(r".*/ws/table/\d+/$")


class MockTable:
    """The table behind one page: ``players[0]`` is the page's player (its user id)."""

    def __init__(
        self, page: Page, players: Sequence[str], config: RuleConfig, capacity: int = 4
    ) -> None:
        self.game = Game(0, config, capacity=capacity)
        self.game.now = time.time()
        for position, player in enumerate(players):
            self.game.do(machine.sit, player=player, position=position)
        self.me = players[0]
        self.position = 0
        self.received: list[dict[str, Any]] = []  # what the page sent, in order
        self.socket: WebSocketRoute | None = None
        self.close_code: int | None = None
        page.route_web_socket(SOCKET, self._connected)

    # -- the socket ----------------------------------------------------------------------------

    def _connected(self, socket: WebSocketRoute) -> None:
        self.socket = socket
        socket.on_message(self._message)

    def _message(self, raw: str | bytes) -> None:
        message = json.loads(raw)
        self.received.append(message)
        kind = message.get("type")
        if kind == "hello":
            snapshot = snapshot_for(self.game.state, self.position, now=time.time())
            self.send(
                {
                    "type": "welcome",
                    "id": message["id"],
                    "position": self.position,
                    "snapshot": snapshot,
                }
            )
        elif kind == "ping":
            self.send({"type": "pong", "id": message["id"]})
        elif "id" in message:
            self.send({"type": "ok", "id": message["id"]})

    def send(self, message: dict[str, Any]) -> None:
        assert self.socket is not None, "the page has not opened its socket"
        self.socket.send(json.dumps(message))

    def close(self, code: int) -> None:
        assert self.socket is not None
        self.close_code = code
        self.socket.close(code=code, reason="")

    def sent(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("type") == kind]

    # -- the table -----------------------------------------------------------------------------

    def push(self, transition: Transition) -> None:
        """Send the page the transition's events it may see."""
        events = events_for(transition.events, self.me)
        if events:
            sent = [wire(delivered(e, transition.state)) for e in events]
            self.send({"type": "events", "events": sent})

    def do(self, command: Any, **kwargs: Any) -> Transition:
        self.game.now = time.time()
        transition = self.game.do(command, **kwargs)
        self.push(transition)
        return transition

    def fire(self) -> Transition:
        """The pending timer, at once (the page's clock is the real one)."""
        self.game.now = time.time()
        transition = self.game.fire(late=0.0)
        self.push(transition)
        return transition

    def deal(self, hands: dict[int, Sequence[Card]]) -> None:
        self.game.now = time.time()
        for s in self.game.state.seats:
            if not s.ready:
                self.push(self.game.do(machine.ready, position=s.position))
        self.push(self.game.deal(hands=hands))


def wire(event: Event) -> dict[str, Any]:
    return {"version": event.version, "type": event.type, "payload": event.payload}

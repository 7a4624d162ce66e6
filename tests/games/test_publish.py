"""Publishing a command's messages (table_services.apublish): in order, and robust like the
on-commit hooks — a Redis hiccup is retried once, and a message lost anyway never stops the
others nor undoes the committed action."""

from __future__ import annotations

from typing import Any

import pytest

from games import table_services


class FlakyLayer:
    def __init__(self, failures: dict[str, int]) -> None:
        self.failures = failures
        self.sent: list[tuple[str, Any]] = []

    async def group_send(self, group: str, message: Any) -> None:
        if self.failures.get(group, 0) > 0:
            self.failures[group] -= 1
            raise ConnectionError("Connection closed by server.")
        self.sent.append((group, message))


@pytest.mark.asyncio
async def test_messages_go_out_in_order_and_a_failure_is_retried_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob = (
        table_services.table_player_group(7, "1"),
        table_services.table_player_group(7, "2"),
    )
    layer = FlakyLayer({alice: 1, bob: 2})  # Alice's first try fails; Bob's both do
    monkeypatch.setattr(table_services, "get_channel_layer", lambda: layer)
    box: table_services.Outbox = [
        (7, {"1": {"n": 1}, "2": {"n": 1}}),
        (7, {"1": {"n": 2}, "2": {"n": 2}}),
    ]

    await table_services.apublish(box)

    assert layer.sent == [(alice, {"n": 1}), (alice, {"n": 2}), (bob, {"n": 2})]
    assert "a message to 2 was lost" in caplog.text


def test_inside_an_outbox_nothing_is_published_until_the_caller_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = FlakyLayer({})
    monkeypatch.setattr(table_services, "get_channel_layer", lambda: layer)
    with table_services.outbox() as box:
        table_services._send(3, {"9": {"n": 1}})
    assert box == [(3, {"9": {"n": 1}})] and layer.sent == []
    table_services._send(3, {"9": {"n": 2}})  # outside: at once
    assert layer.sent == [(table_services.table_player_group(3, "9"), {"n": 2})]

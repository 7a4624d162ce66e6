"""The live platforms' ports (tests/live_server.py): taken below the kernel's ephemeral range,
where no outgoing connection can take one between the pick and the server's bind."""

from __future__ import annotations

import socket

import pytest

from tests import live_server


def test_a_server_port_is_free_and_below_the_ephemeral_range() -> None:
    floor = live_server._ephemeral_floor()
    ports = {live_server.free_port() for _ in range(50)}
    assert len(ports) > 40  # picked at random, not one after another
    for port in ports:
        if floor - live_server._SERVER_PORTS_FLOOR >= 1000:
            assert live_server._SERVER_PORTS_FLOOR <= port < floor
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))  # nothing holds it


def test_a_port_in_use_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        offered = []
        pick = live_server._PICK.randrange

        def randrange(low: int, high: int) -> int:  # the taken port twice, then at random
            port = taken if len(offered) < 2 else pick(low, high)
            offered.append(port)
            return port

        monkeypatch.setattr(live_server, "_ephemeral_floor", lambda: 65535)
        monkeypatch.setattr(live_server._PICK, "randrange", randrange)
        port = live_server.free_port()
        assert offered[:2] == [taken, taken] and len(offered) >= 3
        assert port != taken and port == offered[-1]

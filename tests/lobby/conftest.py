"""Fixtures of the lobby tests: players with coins, the default rules, an isolated channel layer."""

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from itertools import count
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from accounts.models import User
from accounts.services import user_signup
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG
from lobby.models import PlayWait, Room, Seat

_names = count(1)

MakePlayer = Callable[..., User]


@pytest.fixture
def rules(db: None) -> RuleConfiguration:
    """The default rule configuration (made again if a transactional test flushed it).

    `db` becomes `transactional_db` when the test asks for that (for on_commit to fire)."""
    existing = RuleConfiguration.objects.filter(is_default=True).first()
    if existing is not None:
        return existing
    return RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Standard 标准", is_default=True)


@pytest.fixture
def make_player(rules: RuleConfiguration) -> MakePlayer:
    """make_player(coins=100_000, username=None): a player signed up with `user_signup`, whose
    sign-up grant is `coins`."""

    def make(coins: int = 100_000, username: str | None = None) -> User:
        with override_settings(SIGNUP_GRANT=coins):
            return user_signup(username=username or f"player{next(_names)}", password="not-used-1")

    return make


@pytest.fixture
def alice(make_player: MakePlayer) -> User:
    return make_player(username="alice")


@pytest.fixture
def bob(make_player: MakePlayer) -> User:
    return make_player(username="bob")


@pytest.fixture
def carol(make_player: MakePlayer) -> User:
    return make_player(username="carol")


def lobby_counts() -> tuple[int, int]:
    """(rooms, seats): what must not change when a request is refused."""
    return Room.objects.count(), Seat.objects.count()


def room_state(room: Room) -> dict[str, Any]:
    """Everything about a room a refused request must leave as it was."""
    room.refresh_from_db()
    return {
        "status": room.status,
        "owner": room.owner_id,
        "version": room.version,
        "seats": sorted(Seat.objects.filter(room=room).values_list("user_id", "position")),
    }


@pytest.fixture(autouse=True)
def no_table_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seats are taken at the room's table too, which schedules any bot's action on commit:
    keep those tasks out of the shared broker (and Play now's deadline tasks too)."""
    from games.live import tasks
    from lobby import tasks as lobby_tasks

    monkeypatch.setattr(tasks.bot_act, "apply_async", lambda **kwargs: None)
    monkeypatch.setattr(lobby_tasks.play_wait_close, "apply_async", lambda **kwargs: None)


def wait_over(*users: User) -> None:
    """Move every Play now wait (of these users, if given) to just past its deadline, as if
    PLAY_NOW_WAIT_SECONDS had gone by; each keeps its length."""
    waits = PlayWait.objects.all()
    if users:
        waits = waits.filter(user__in=users)
    now = timezone.now()
    for wait in waits:
        length = wait.deadline - wait.created_at
        wait.deadline = now - timedelta(milliseconds=10)
        wait.created_at = wait.deadline - length
        wait.save(update_fields=["deadline", "created_at"])


@pytest.fixture(autouse=True)
def isolated_channel_layer(settings: Any) -> Iterator[None]:
    """The configured channel layer (Redis when REDIS_URL is set) under a prefix of its own,
    so that this test hears no other test run sharing the Redis server, nor is heard by it."""
    layer = dict(settings.CHANNEL_LAYERS["default"])
    if layer["BACKEND"] != "channels.layers.InMemoryChannelLayer":
        layer["CONFIG"] = {**layer.get("CONFIG", {}), "prefix": f"test-{uuid.uuid4().hex}"}
    settings.CHANNEL_LAYERS = {"default": layer}
    yield

"""Fixtures of the accounts tests."""

from collections.abc import Callable
from itertools import count

import pytest

from accounts.models import User
from accounts.services import wallet_get_or_create, wallet_grant

_names = count(1)

MakePlayer = Callable[..., User]


@pytest.fixture
def make_player(db: None) -> MakePlayer:
    """make_player(coins=1000, username=None): a user whose wallet holds `coins` (granted)."""

    def make(coins: int = 1000, username: str | None = None) -> User:
        user = User.objects.create_user(
            username=username or f"player{next(_names)}", password="not-used-1"
        )
        wallet_get_or_create(user=user)
        if coins:
            wallet_grant(user=user, amount=coins, idempotency_key=f"test-grant:{user.pk}")
        return user

    return make

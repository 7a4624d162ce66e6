"""Fixtures of the games tests: staff members of the `rules_admin` and `support` groups.

Django is imported inside the fixtures: this conftest also governs the pure tests
(tests/games/rules, tests/games/table), which run without Django (`make test-pure`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from accounts.models import User

_names = count(1)

MakeStaff = Callable[[str], "User"]


@pytest.fixture
def make_staff(db: None) -> MakeStaff:
    """make_staff(group): a staff user (may sign in to the admin) in that group only."""
    from django.contrib.auth.models import Group

    from accounts.models import User

    def make(group: str) -> User:
        user = User.objects.create_user(
            username=f"{group}{next(_names)}", password="not-used-1", is_staff=True
        )
        user.groups.add(Group.objects.get(name=group))
        return user

    return make


@pytest.fixture
def rules_admin(make_staff: MakeStaff) -> User:
    from accounts.groups import RULES_ADMIN

    return make_staff(RULES_ADMIN)


@pytest.fixture
def support(make_staff: MakeStaff) -> User:
    from accounts.groups import SUPPORT

    return make_staff(SUPPORT)

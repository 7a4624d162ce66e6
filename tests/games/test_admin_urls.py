"""A mistyped admin address is a 404, never a 500.

``/admin/games/ruleconfiguration/<id>/change/history/`` reached django-simple-history's
history view with the object id "<id>/change", which it looked up as it came: a ValueError,
a 500. Every registered model's admin is then swept with such addresses.
"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client

from accounts.models import User
from games.setup.selectors import rule_configuration_default

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(admin_user: User) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


@pytest.mark.parametrize(
    "tail",
    [
        "{pk}/change/history/",
        "{pk}/change/history",  # the slash appended first (a redirect), then the same
        "abc/history/",
        "{pk}x/history/",
        "{pk}/history/abc/",
        "{pk}/history/{pk}x/",
        "99999999999999999999999/history/",
    ],
)
def test_a_mistyped_rule_history_address_is_a_404(staff: Client, tail: str) -> None:
    pk = rule_configuration_default().pk
    url = f"/admin/games/ruleconfiguration/{tail.format(pk=pk)}"
    response = staff.get(url, follow=True)
    assert response.status_code == 404


def test_a_mistyped_round_address_is_a_404(staff: Client) -> None:
    for tail in ("1/change/history/", "1/change/history", "abc/history/", "abc/change/"):
        response = staff.get(f"/admin/games/round/{tail}", follow=True)
        assert response.status_code == 404, tail


def test_the_rule_history_itself_still_opens(staff: Client) -> None:
    pk = rule_configuration_default().pk
    assert staff.get(f"/admin/games/ruleconfiguration/{pk}/history/").status_code == 200


TAILS = [
    "1/change/history/",
    "1/change/history/x/",
    "abc/history/",
    "1/history/abc/",
    "abc/change/",
    "abc/delete/",
    "1/delete/x/",
    "1/change/x/",
    "abc/",
    "verify/x/",
    "1/adjust/x/",
    "abc/reverse/",
    "1/special-stats/x/",
    "%00/change/",
]


def test_no_admin_address_of_any_model_is_a_500(staff: Client) -> None:
    rule_configuration_default()
    errors = []
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        for tail in TAILS:
            status = staff.get(base + tail).status_code
            if status >= 500:
                errors.append(f"{base}{tail}: {status}")
    assert errors == []

"""The lobby page's variant decks in Chromium: the "Open a room" form's seats follow
the chosen rules (static/lobby/create.js), live rows show their variant badge and the variant
filter keeps up with the events (static/lobby/lobby.js), and Play now seats a player at a table
of the variant chosen."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from rest_framework.authtoken.models import Token

from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from lobby.models import Room
from tests.browser.conftest import NewPage, Shot
from tests.browser.test_lobby_pages_browser import api, expect_rows
from tests.games.table_helpers import default_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = 15_000


def configuration(name: str, **deck: int) -> RuleConfiguration:
    existing = RuleConfiguration.objects.filter(name=name).first()
    return existing or RuleConfiguration.from_engine(RuleConfig(**deck), name=name)


def enabled(page: Page, select: str) -> list[str]:
    return page.locator(f"form[data-room-create] select[name={select}] option").evaluate_all(
        "options => options.filter(o => !o.disabled).map(o => o.value)"
    )


def test_the_lobby_follows_the_variants(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    classic = default_rules()
    extra = configuration("Extra suit (test)", extra_suits=1)
    two = configuration("Two suits (test)", extra_suits=2)
    jokers = configuration("Jokers (test)", jokers=2)
    viewer, opener = make_player("viewer"), make_player("opener")
    token = Token.objects.create(user=opener).key
    old = Room.objects.create(
        name="Old", rules=classic, owner=viewer, base_score=10, seats=4, entry_minimum=0
    )
    page = new_page()
    page.context.add_cookies(
        [
            {"name": k, "value": v, "url": live_platform.url}
            for k, v in session_cookie_for(viewer).items()
        ]
    )
    page.goto(f"{live_platform.url}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)

    # The create form: the seats follow the rules, the bots the seats.
    form = page.locator("form[data-room-create]")
    form.locator("select[name=rules]").select_option(str(two.pk))
    assert enabled(page, "seats") == ["2", "3", "4", "5", "6"]
    form.locator("select[name=seats]").select_option("6")
    form.locator("select[name=rules]").select_option(str(extra.pk))
    assert enabled(page, "seats") == ["2", "3", "4", "5"]
    expect(form.locator("select[name=seats]")).to_have_value("5")  # moved down to the most
    form.locator("select[name=rules]").select_option(str(classic.pk))
    expect(form.locator("select[name=seats]")).to_have_value("4")
    form.locator("select[name=seats]").select_option("3")
    assert enabled(page, "bots") == ["0", "1", "2"]
    shot(page, "create-form")

    # Live rows carry their badge; the classic one is there, subtly.
    created = api(
        live_platform,
        token,
        "/api/lobby/rooms/",
        {"name": "Wild", "base_score": 10, "seats": 4, "rules": jokers.pk},
    )
    expect_rows(page, [created["id"], old.pk])
    wild = page.locator(f'#lobby-rooms tr[data-room="{created["id"]}"] [data-field=variant]')
    expect(wild).to_have_text("Jokers")
    expect(wild).not_to_have_class(re.compile(r"\bclassic\b"))
    plain = page.locator(f'#lobby-rooms tr[data-room="{old.pk}"] [data-field=variant]')
    expect(plain).to_have_text("Classic")
    expect(plain).to_have_class(re.compile(r"\bclassic\b"))

    # The variant filter, over the socket, and the events after it.
    page.locator("#lobby-filters select[name=variant]").select_option("laizi")
    expect_rows(page, [created["id"]])
    expect(page).to_have_url(re.compile(r"/lobby/\?[^#]*variant=laizi"))
    api(live_platform, token, "/api/lobby/leave/")
    api(live_platform, token, f"/api/lobby/rooms/{created['id']}/close/")
    expect_rows(page, [])
    api(live_platform, token, "/api/lobby/rooms/", {"name": "Plain", "base_score": 10, "seats": 2})
    api(live_platform, token, "/api/lobby/leave/")
    both = configuration("Both (test)", extra_suits=1, jokers=2)
    again = api(
        live_platform,
        token,
        "/api/lobby/rooms/",
        {"name": "Both", "base_score": 10, "seats": 5, "rules": both.pk},
    )
    expect_rows(page, [again["id"]])  # of the variant; the classic one is not
    expect(
        page.locator(f'#lobby-rooms tr[data-room="{again["id"]}"] [data-field=variant]')
    ).to_have_text("Extra suit · Jokers")
    shot(page, "filtered")

    # Play now, by variant: to the table of a room of that variant.
    page.goto(f"{live_platform.url}/lobby/")
    page.get_by_test_id("play-variant-duoyise").click()
    expect(page).to_have_url(re.compile(r"/games/table/\d+/$"), timeout=PAGE)
    room_id = int(re.findall(r"/table/(\d+)/", page.url)[0])
    rules = Room.objects.get(pk=room_id).rules
    assert (rules.extra_suits, rules.spare_cards) == (1, 0)  # of the variant 多一色

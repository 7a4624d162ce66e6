"""Invite links in Chromium: the owner of a private room copies its share link (and sees its
QR code) from the table page; one friend opens the link in a fresh browser, signs up through
?next= and takes the seat with one tap; another, signed in already, opens it in another fresh
browser and is seated with one tap. No page breaks the Content-Security-Policy."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from games.models import RuleConfiguration
from lobby.models import Invite, Seat
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot
from tests.browser.table_flow import (
    PACING,
    PAGE,
    PASSWORD,
    Player,
    open_lobby,
    sign_up,
    wait_for_table,
)
from tests.browser.test_csp_browser import Watch
from tests.games.table_helpers import fast_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

RULES = "Invite (browser)"


def test_an_invitee_opens_the_share_link_and_is_seated(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    base = live_platform.url
    fast_rules(name=RULES, **PACING)
    watch = Watch()

    # The owner opens a private room of three seats from the lobby's form.
    owner = Player("invite-owner", watch.page(new_page(viewport=DESKTOP)))
    sign_up(owner, base)
    open_lobby(owner, base)
    form = owner.page.locator("form[data-action='room.create']")
    form.locator("input[name=name]").fill("Friends only")
    form.locator("select[name=rules]").select_option(
        str(RuleConfiguration.objects.get(name=RULES).pk)
    )
    form.locator("select[name=seats]").select_option("3")
    form.locator("input[name=private]").set_checked(True)
    form.locator("button[type=submit]").click()
    wait_for_table(owner)
    room = Seat.objects.select_related("room").get(user=owner.user).room
    assert room.is_private and room.code

    # Its header's Invite chip: the link, a copy button and the QR code.
    owner.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    owner.testid("invite-chip").locator("summary").click()
    expect(owner.testid("invite-qr").locator("svg")).to_be_visible()
    owner.testid("invite-copy").click()
    expect(owner.testid("invite-copy-status")).to_have_text("Copied")
    link = owner.page.evaluate("navigator.clipboard.readText()")
    assert link == owner.testid("invite-link").input_value()
    assert re.fullmatch(rf"{re.escape(base)}/lobby/invite/r{room.pk}\.[A-Za-z0-9_-]{{43}}/", link)
    assert room.code not in link
    shot(owner.page, "owner-invite-chip")

    # A friend without an account, on a phone: the link, sign up, back, one tap.
    friend = Player("invite-friend", watch.page(new_page(viewport=PHONE)))
    friend.page.goto(link)
    expect(friend.testid("invite-title")).to_contain_text("invites you to a private table")
    expect(friend.testid("invite-free")).to_contain_text("2 of 3 seats free")
    shot(friend.page, "invite-visitor")
    friend.testid("invite-signup").click()
    signup = friend.page.locator("form.form")
    signup.locator("input[name=username]").fill(friend.name)
    signup.locator("input[name=password1]").fill(PASSWORD)
    signup.locator("input[name=password2]").fill(PASSWORD)
    signup.locator("button[type=submit]").click()
    friend.page.wait_for_url(link, timeout=PAGE)
    assert not Seat.objects.filter(user__username=friend.name).exists()  # not before the tap
    friend.testid("invite-accept").click()
    wait_for_table(friend, room)
    assert Seat.objects.get(user__username=friend.name).room_id == room.pk
    shot(friend.page, "friend-seated")

    # Someone signed in already, in another fresh browser: one tap.
    known = make_player("invite-known")
    other = Player("invite-known", watch.page(new_page(viewport=DESKTOP)), known)
    other.page.context.add_cookies(
        [{"name": k, "value": v, "url": base} for k, v in session_cookie_for(known).items()]
    )
    other.page.goto(link)
    expect(other.testid("invite-free")).to_contain_text("1 of 3 seats free")
    other.testid("invite-accept").click()
    wait_for_table(other, room)
    assert Seat.objects.get(user=known).room_id == room.pk
    expect(other.testid("invite-chip")).to_have_count(0)  # only the owner shares the link

    # A new link: the old one stops working, with a clear page.
    owner.page.reload()
    wait_for_table(owner, room)
    owner.testid("invite-chip").locator("summary").click()
    owner.testid("invite-regenerate").click()
    wait_for_table(owner, room)
    owner.testid("invite-chip").locator("summary").click()
    assert owner.testid("invite-link").input_value() != link
    assert Invite.objects.filter(room=room).count() == 1
    stranger = new_page(viewport=PHONE)
    stranger.goto(link)
    expect(stranger.get_by_test_id("invite-error")).to_have_attribute(
        "data-code", "invite_not_found"
    )
    watch.check("the invite pages")


def test_a_visitor_without_an_account_takes_the_seat_as_a_guest(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    from accounts.models import User
    from lobby.invites import invite_path
    from lobby.services import room_create

    base = live_platform.url
    rules = fast_rules(name=RULES, **PACING)
    owner = make_player("guest-host")
    room = room_create(owner=owner, base_score=1, seats=2, private=True, rules=rules)
    link = base + invite_path(Invite.objects.get(room=room))
    watch = Watch()

    # A fresh phone browser, no account: the invite page, one tap, seated as a guest.
    visitor = watch.page(new_page(viewport=PHONE, locale="zh-CN"))
    visitor.goto(link)
    expect(visitor.get_by_test_id("invite-free")).to_be_visible()
    shot(visitor, "invite-guest-offer")
    visitor.get_by_test_id("invite-guest").click()
    visitor.wait_for_url(f"**/games/table/{room.pk}/", timeout=PAGE)
    guest = User.objects.get(is_guest=True)
    assert Seat.objects.get(user=guest).room_id == room.pk
    expect(visitor.locator("body")).to_contain_text(guest.username)
    shot(visitor, "guest-seated")
    watch.check("the invite page and the table, as a guest")

# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""The player's pages in one language: the profile's ledger says why coins moved (a sign-up
grant, a round) in the reader's language instead of the stored "Sign-up grant" and
"round:11", and the profile and hand history group numbers by thousands."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import BOT_FUNDING_REASON, SIGNUP_GRANT_REASON, Transaction, User
from games.models import Round
from tests.games.live.test_table_services import World, world  # noqa: F401  (fixture)
from tests.games.played_rounds import play_round

pytestmark = pytest.mark.django_db(transaction=True)


def text_of(response: object) -> str:
    body = response.content.decode()  # type: ignore[attr-defined]
    body = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", body)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", body)))


def client_for(user: User, language: str) -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


@pytest.fixture
def played(world: World) -> Round:
    return play_round(world, ["alice", "bob"])


def test_the_chinese_profile_says_why_in_chinese(played: Round) -> None:
    alice = User.objects.get(username="alice")
    response = client_for(alice, "zh-hans").get(reverse("accounts:profile"))
    text = text_of(response)
    assert "注册赠送" in text and "Sign-up grant" not in text
    assert f"牌局 #{played.pk}" in text
    assert "round:" not in text and "user:" not in text
    replay = reverse("games:round_replay", args=[played.pk])
    assert f'<a href="{replay}">牌局 #{played.pk}</a>' in response.content.decode()
    assert "100,000" in text  # the sign-up grant's balance, grouped


def test_the_english_profile_says_why_in_english(played: Round) -> None:
    alice = User.objects.get(username="alice")
    text = text_of(client_for(alice, "en").get(reverse("accounts:profile")))
    assert "Sign-up grant" in text and "注册赠送" not in text
    assert f"Round #{played.pk}" in text and "round:" not in text


def test_reason_and_reference_display() -> None:
    grant = Transaction(kind="grant", reason=SIGNUP_GRANT_REASON, reference="user:7")
    bot = Transaction(kind="grant", reason=BOT_FUNDING_REASON, reference="room:3")
    typed = Transaction(kind="admin_adjustment", reason="Refund, ticket 12", reference="x:y")
    with translation.override("zh-hans"):
        assert grant.reason_display() == "注册赠送"
        assert bot.reason_display() == "机器人补足房间的入座门槛"
        assert bot.reference_display() == "房间 #3"
        assert typed.reason_display() == "Refund, ticket 12"  # as the admin typed it
    with translation.override("en"):
        assert grant.reference_display() == "" and grant.reference_round_id() is None
        assert Transaction(reference="round:11").reference_display() == "Round #11"
        assert Transaction(reference="round:11").reference_round_id() == 11
        assert typed.reference_display() == "x:y"
        assert Transaction(reference="round:x").reference_display() == "round:x"


def test_the_hand_history_groups_coins(played: Round) -> None:
    alice = User.objects.get(username="alice")
    played.players.filter(user=alice).update(delta=12_345, water=123, penalty=1_500)
    text = text_of(client_for(alice, "zh-hans").get(reverse("games:history")))
    assert "+12,345" in text and "1,500" in text and "+123" in text


def test_a_reference_links_to_the_round_or_room_it_names_and_nothing_else() -> None:
    from accounts.admin import reference_link

    with translation.override("en"):
        round_link = reference_link(Transaction(kind="settlement", reference="round:14"))
        room_link = reference_link(Transaction(kind="grant", reference="room:3"))
        assert round_link == (
            f'<a href="{reverse("admin:games_round_change", args=[14])}">Round #14</a>'
        )
        assert room_link == f'<a href="{reverse("admin:lobby_room_change", args=[3])}">Room #3</a>'
        # Anything else is words, never a link (and never markup from the stored text).
        for reference in ("round:abc", "x:y", "round:1<script>", "https://evil.example"):
            text = reference_link(Transaction(kind="grant", reference=reference))
            assert "<a" not in text and "<script" not in text, reference
        assert reference_link(Transaction(kind="grant", reference="user:7")) == "user:7"

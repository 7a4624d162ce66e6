"""The collusion report's admin: a flag's evidence (its rounds, the water given away, the
signs in words, the reasons), the flow graph of its ring (SVG and table), "Scan now" (POST,
rate-limited), and freezing a player's transfers (permission, required note, history)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts import scan_now as accounts_collusion
from accounts.groups import ECONOMY_ADMIN, RULES_ADMIN, SUPPORT
from accounts.models import CollusionFlag, TransferFreeze, User
from tests.accounts.conftest import MakePlayer

pytestmark = pytest.mark.django_db

AT = datetime(2026, 6, 1, tzinfo=UTC)


def _staff(username: str, group: str) -> tuple[Client, User]:
    user = User.objects.create_user(username=username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client, user


def _flag(loser: User, winner: User, *, ring: int | None = None, rounds: int = 3) -> CollusionFlag:
    evidence = [
        {
            "round": 1000 + i,
            "settled_at": AT.isoformat(),
            "room": "Just us <b>",
            "sign": "worst" if i % 2 == 0 else "careful_loss",
            "better_share": 0.995,
            "regret": 7.5,
            "given": 6 + i,
            "coins": 1200,
        }
        for i in range(rounds)
    ]
    return CollusionFlag.objects.create(
        loser=loser,
        winner=winner,
        shared_rounds=rounds,
        flow=1200 * rounds,
        losses=1200 * rounds,
        share_percent="100.0",
        first_round_at=AT,
        last_round_at=AT,
        updated_at=AT,
        score=9.1,
        threshold=8.0,
        water_given=sum(r["given"] for r in evidence),
        evidence=evidence,
        reasons=["deliberate_play", "coin_flow"],
        ring=ring,
    )


def test_the_flag_page_shows_its_rounds_the_water_and_the_signs_in_words(
    make_player: MakePlayer,
) -> None:
    client, _user = _staff("helpdesk", SUPPORT)
    flag = _flag(make_player(10, username="dumper"), make_player(10, username="friend"))

    page = client.get(reverse("admin:accounts_collusionflag_change", args=[flag.pk]))

    text = page.content.decode()
    assert page.status_code == 200
    assert reverse("admin:games_round_change", args=[1000]) in text
    assert "worst 1 % of arrangements (99.5% of the splits are better)" in text
    assert "careful loss: the best split of a losing shape" in text
    assert "deliberate play, coin flow" in text
    assert "9.1 of 8.0 needed" in text
    assert "Just us &lt;b&gt;" in text and "Just us <b>" not in text  # escaped
    assert "<td>21</td>" in text  # the water given away in all: 6 + 7 + 8
    listing = client.get(reverse("admin:accounts_collusionflag_changelist")).content.decode()
    assert "Scan now" in listing and reverse("admin:accounts_collusionflag_scan") in listing


def test_the_ring_is_drawn_as_svg_and_given_as_a_table(make_player: MakePlayer) -> None:
    client, _user = _staff("helpdesk", SUPPORT)
    a, b, c, hub = (make_player(10, username=n) for n in ("ring_a", "ring_b", "ring_c", "hub"))
    ring = min(u.pk for u in (a, b, c, hub))
    flags = [_flag(u, hub, ring=ring) for u in (a, b, c)]
    lone = _flag(make_player(10, username="lone"), make_player(10, username="lonewin"))

    text = client.get(
        reverse("admin:accounts_collusionflag_change", args=[flags[0].pk])
    ).content.decode()

    start = text.index("<svg xmlns")
    svg = text[start : text.index("</svg>", start)]
    assert 'role="img"' in svg and "Ring of 4 accounts" in svg
    assert svg.count("<circle") == 4 and svg.count("<line") == 3
    for name in ("ring_a", "ring_b", "ring_c", "hub"):
        assert name in svg
    assert "lone" not in svg and "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert "3,600 coins · 21 water · 3 rounds" in svg
    table = text[text.index('class="collusion-ring-table"') :]
    for f in flags:
        assert reverse("admin:accounts_collusionflag_change", args=[f.pk]) in table
    alone = client.get(reverse("admin:accounts_collusionflag_change", args=[lone.pk]))
    assert "Ring of 2 accounts" in alone.content.decode()


def test_scan_now_runs_the_scan_once_a_minute_per_staff_member(
    make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _user = _staff("helpdesk", SUPPORT)
    other, _other = _staff("helpdesk2", ECONOMY_ADMIN)
    runs: list[int] = []
    monkeypatch.setattr(accounts_collusion, "_scans", [lambda: runs.append(1) or 2])
    monkeypatch.setattr(accounts_collusion, "_worker_answers", lambda: False)
    url = reverse("admin:accounts_collusionflag_scan")

    assert client.get(url).status_code == 405  # a POST only
    first = client.post(url, follow=True)
    assert "The scan ran: 2 pairs are flagged." in first.content.decode()
    again = client.post(url, follow=True)
    assert "try again in" in again.content.decode()
    assert len(runs) == 1
    assert "The scan ran" in other.post(url, follow=True).content.decode()  # its own budget
    assert len(runs) == 2

    rules, _rules = _staff("rulesmith", RULES_ADMIN)
    assert rules.post(url).status_code == 403
    csrf = Client(enforce_csrf_checks=True)
    csrf.force_login(_other)
    assert csrf.post(url).status_code == 403
    assert len(runs) == 2


def test_scan_now_queues_the_task_when_a_worker_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from shisanshui.celery import app

    client, _user = _staff("helpdesk", SUPPORT)
    sent: list[str] = []
    monkeypatch.setattr(accounts_collusion, "_worker_answers", lambda: True)
    monkeypatch.setattr(accounts_collusion, "_scans", [lambda: pytest.fail("ran here")])
    monkeypatch.setattr(app, "send_task", lambda name, *a, **k: sent.append(name))

    page = client.post(reverse("admin:accounts_collusionflag_scan"), follow=True)

    assert "The scan is running" in page.content.decode()
    assert sent == ["accounts.tasks.collusion_scan"]


def test_support_freezes_and_unfreezes_with_a_note_and_it_is_kept(
    make_player: MakePlayer,
) -> None:
    client, staff = _staff("helpdesk", SUPPORT)
    loser, winner = make_player(10, username="dumper"), make_player(10, username="friend")
    flag = _flag(loser, winner)
    freeze = reverse("admin:accounts_user_freeze", args=[loser.pk]) + f"?flag={flag.pk}"

    page = client.get(reverse("admin:accounts_collusionflag_change", args=[flag.pk]))
    assert freeze.replace("?", "?") in page.content.decode().replace("&amp;", "&")
    assert client.get(freeze).status_code == 200

    blank = client.post(freeze, {"note": "   "})
    assert blank.status_code == 200 and "This field is required" in blank.content.decode()
    assert not User.objects.get(pk=loser.pk).transfers_frozen

    done = client.post(freeze, {"note": "Dumps to friend; see the flag."})
    assert done.status_code == 302
    assert done["Location"] == reverse("admin:accounts_collusionflag_change", args=[flag.pk])
    frozen = User.objects.get(pk=loser.pk)
    assert frozen.transfers_frozen and frozen.transfers_frozen_by == staff
    assert frozen.transfers_frozen_note == "Dumps to friend; see the flag."

    twice = client.post(freeze, {"note": "again"})
    assert "frozen already" in twice.content.decode()
    assert TransferFreeze.objects.count() == 1

    user_page = client.get(reverse("admin:accounts_user_change", args=[loser.pk])).content
    assert b"transfers frozen since" in user_page and b"Dumps to friend" in user_page

    unfreeze = reverse("admin:accounts_user_unfreeze", args=[loser.pk])
    assert client.post(unfreeze, {"note": "Reviewed: brothers."}).status_code == 302
    assert not User.objects.get(pk=loser.pk).transfers_frozen
    history = list(
        TransferFreeze.objects.order_by("pk").values_list("action", "by", "note", "flag")
    )
    assert history == [
        ("freeze", staff.pk, "Dumps to friend; see the flag.", flag.pk),
        ("unfreeze", staff.pk, "Reviewed: brothers.", None),
    ]
    not_frozen = client.post(unfreeze, {"note": "again"})
    assert "not frozen" in not_frozen.content.decode()
    assert TransferFreeze.objects.count() == 2


def test_freezing_needs_the_permission_and_refuses_bots_and_oneself(
    make_player: MakePlayer,
) -> None:
    player = make_player(10, username="someone")
    rules, _rules = _staff("rulesmith", RULES_ADMIN)
    url = reverse("admin:accounts_user_freeze", args=[player.pk])
    assert rules.get(url).status_code == 403
    assert rules.post(url, {"note": "no"}).status_code == 403

    client, staff = _staff("helpdesk", SUPPORT)
    self_url = reverse("admin:accounts_user_freeze", args=[staff.pk])
    assert "your own account" in client.post(self_url, {"note": "x"}).content.decode()
    User.objects.filter(pk=player.pk).update(is_bot=True)
    assert "Bots hold no transfers" in client.post(url, {"note": "x"}).content.decode()
    long = client.post(
        reverse("admin:accounts_user_freeze", args=[make_player(1, username="p2").pk]),
        {"note": "x" * 3000},
    )
    assert long.status_code == 200
    assert not TransferFreeze.objects.exists()
    assert not User.objects.filter(transfers_frozen_at__isnull=False).exists()
    missing = reverse("admin:accounts_user_freeze", args=[999999])
    assert client.get(missing).status_code == 404

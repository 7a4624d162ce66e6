# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""The round audit page of the admin speaks one language, names players and groups numbers.

A four-player round is settled through the table services (tests/games/played_rounds.py); one
player is then a bot with a nickname. In Chinese the page has no English label (category, gun,
row result, transfer kind), in English no Chinese one; the pair, cut and transfer tables name
players (never "7 → 3"), a run-over is 辗过 and a home run 全垒打, and coins have thousands
separators.
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import EconomySettings, User
from accounts.services import economy_settings_get_or_create
from games.models import Round
from tests.games.live.test_table_services import World, world  # noqa: F401  (fixture)
from tests.games.played_rounds import make_bot, play_round

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["alice", "bob", "carol", "bot-ee37f740"]


def page_text(response: object) -> str:
    body = response.content.decode()  # type: ignore[attr-defined]
    body = re.sub(r"(?s)<(script|style|pre)\b.*?</\1>", " ", body)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", body)))


def section(response: object, ident: str) -> str:
    body = response.content.decode()  # type: ignore[attr-defined]
    match = re.search(rf'(?s)<div class="module" id="{ident}">(.*?)</div>', body)
    assert match is not None, ident
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", match.group(1))))


@pytest.fixture
def played(world: World) -> Round:
    round_ = play_round(world, NAMES)
    make_bot(User.objects.get(username="bot-ee37f740"), zh="金龙", en="Dragon")
    return round_


def staff_client(user: User, language: str) -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


def _with_guns(round_: Round) -> None:
    """Make the stored result's first pair a run-over and the second part of a home run
    (labels only: the page shows a mismatch, which does not matter here)."""
    result = round_.result
    first, second = result["pairs"][0], result["pairs"][1]
    first.update(rows=[1, 0, 1], gun="gun", shooter=first["a"], gun_water=3)
    second.update(rows=[1, 1, 1], gun="home_run", shooter=second["a"], gun_water=12)
    Round.objects.filter(pk=round_.pk).update(result=result)


def test_the_round_page_lists_each_players_table_fee(world: World, admin_user: User) -> None:
    economy_settings_get_or_create()
    EconomySettings.objects.update(table_fee_percent=10)
    round_ = play_round(world, NAMES)
    fees = {int(p["id"]): p.get("fee", 0) for p in round_.result["players"]}
    assert any(fees.values()), "the seeded round has a winner who pays a fee"
    for language, label in (("en", "table fee"), ("zh-hans", "台费")):
        response = staff_client(admin_user, language).get(
            reverse("admin:games_round_change", args=[round_.pk])
        )
        assert label in section(response, "players")
        cells = re.findall(r'<td class="number fee">([^<]*)</td>', response.content.decode())
        assert sorted(int(c.replace(",", "")) for c in cells) == sorted(fees.values())


def test_the_chinese_round_page_has_no_english_labels(played: Round, admin_user: User) -> None:
    _with_guns(played)
    response = staff_client(admin_user, "zh-hans").get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    assert response.status_code == 200
    pairs = section(response, "pairs")
    assert "辗过" in pairs and "全垒打" in pairs
    assert "头墩" in pairs and ("赢" in pairs or "输" in pairs)
    assert "结算" in pairs  # the transfers' kind
    for english in ("settlement", "Gun", "Run-over", "Home run", "won", "lost", "tie", "True"):
        assert not re.search(rf"\b{english}\b", pairs), english
    assert "[" not in pairs  # no raw row list such as [1, 0, 1]
    title = re.search(r"<h1>(.*?)</h1>", response.content.decode())
    assert title is not None and re.fullmatch(r"牌局 第 \d+ 桌，第 1 局", title.group(1))
    assert "100,000" in section(response, "players")  # balance before, grouped


def test_the_english_round_page_has_no_chinese_labels(played: Round, admin_user: User) -> None:
    _with_guns(played)
    response = staff_client(admin_user, "en").get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    pairs = section(response, "pairs")
    assert "Run-over" in pairs and "Home run" in pairs and "(settlement)" in pairs
    assert not re.search(r"[打辗全垒墩赢输平结算]", pairs.replace("金龙", ""))
    assert "Dragon (bot-ee37f740)" in pairs


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_pairs_cuts_and_transfers_name_the_players(
    played: Round, admin_user: User, language: str
) -> None:
    response = staff_client(admin_user, language).get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    pairs = section(response, "pairs")
    ids = {str(pk) for pk in User.objects.filter(username__in=NAMES).values_list("pk", flat=True)}
    for user_id in ids:
        assert not re.search(rf"(^|\s){user_id}\s*→", pairs), pairs
        assert not re.search(rf"→\s*{user_id}:", pairs), pairs
    nickname = "金龙" if language == "zh-hans" else "Dragon"
    assert played.result["transfers"], "the seeded round moves coins"
    assert "→" in pairs
    for name in ("alice", "bob", "carol", f"{nickname} (bot-ee37f740)"):
        assert name in pairs


def test_the_round_list_names_bots_and_groups_amounts(played: Round, admin_user: User) -> None:
    played.players.filter(user__username="alice").update(delta=12_345)
    response = staff_client(admin_user, "zh-hans").get(reverse("admin:games_round_changelist"))
    text = page_text(response)
    assert "alice +12,345" in text
    assert "金龙 (bot-ee37f740)" in text
    assert "12,345" in text  # the amount column


def test_the_round_page_names_its_rules_and_the_coins_of_each_pair(
    played: Round, admin_user: User
) -> None:
    rules = played.table.room.rules
    base = played.config["base_score"]
    response = staff_client(admin_user, "en").get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    body = response.content.decode()
    row = re.search(r'(?s)<tr id="round-rules">(.*?)</tr>', body)
    assert row is not None
    assert reverse("admin:games_ruleconfiguration_change", args=[rules.pk]) in row.group(1)
    version = rules.history.order_by("-history_id").first()
    assert version is not None
    assert reverse(
        "admin:games_ruleconfiguration_simple_history", args=[rules.pk, version.history_id]
    ) in row.group(1)
    assert rules.name in row.group(1)
    assert f"base score {base}" in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", row.group(1)))
    coins = re.findall(r'<td class="number pair-coins">([^<]*)</td>', body)
    waters = [p["water"] for p in played.result["pairs"]]
    assert [int(c.replace(",", "").replace("+", "")) for c in coins] == [w * base for w in waters]
    assert "coins won or lost, before the penalty" in section(response, "players")
    for player in played.players.all():
        assert reverse("admin:accounts_user_change", args=[player.user_id]) in body


def test_a_round_of_a_table_opened_before_any_recorded_version_says_unknown(
    played: Round, admin_user: User
) -> None:
    played.table.room.rules.history.all().delete()
    response = staff_client(admin_user, "zh-hans").get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    row = re.search(r'(?s)<tr id="round-rules">(.*?)</tr>', response.content.decode())
    assert row is not None and "未知" in row.group(1)


def _in_group(username: str, group: str) -> User:
    from django.contrib.auth.models import Group

    user = User.objects.create_user(username=username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


def test_ledger_references_link_to_their_round(played: Round, admin_user: User) -> None:
    from accounts.models import Entry

    client = staff_client(admin_user, "en")
    round_url = reverse("admin:games_round_change", args=[played.pk])
    assert played.transaction_id is not None
    page = client.get(reverse("admin:accounts_transaction_change", args=[played.transaction_id]))
    assert f'href="{round_url}"' in page.content.decode()
    entry = Entry.objects.filter(transaction_id=played.transaction_id).first()
    assert entry is not None
    page = client.get(reverse("admin:accounts_entry_change", args=[entry.pk]))
    assert f'href="{round_url}"' in page.content.decode()
    listing = client.get(reverse("admin:accounts_entry_changelist"))
    assert f'href="{round_url}"' in listing.content.decode()


def test_the_user_page_links_to_their_rounds_and_ledger(played: Round, admin_user: User) -> None:
    from accounts.groups import SUPPORT
    from accounts.models import Account, AccountKind

    player = User.objects.get(username="alice")
    client = staff_client(_in_group("helpdesk", SUPPORT), "en")
    page = client.get(reverse("admin:accounts_user_change", args=[player.pk]))
    body = html.unescape(page.content.decode())
    rounds_url = reverse("admin:games_round_changelist") + "?player=alice"
    assert rounds_url in body
    wallet = Account.objects.get(user=player, kind=AccountKind.WALLET)
    assert reverse("admin:accounts_entry_changelist") + f"?account__id__exact={wallet.pk}" in body
    listing = client.get(rounds_url)
    assert listing.status_code == 200
    assert reverse("admin:games_round_change", args=[played.pk]) in listing.content.decode()


def test_rules_admins_read_rounds_and_staff_without_the_permission_get_403(
    played: Round,
) -> None:
    from accounts.groups import RULES_ADMIN

    rules = staff_client(_in_group("rulesmith", RULES_ADMIN), "en")
    assert rules.get(reverse("admin:games_round_change", args=[played.pk])).status_code == 200
    assert rules.get(reverse("admin:games_round_changelist")).status_code == 200
    bare = User.objects.create_user(username="bare", password="x", is_staff=True)
    client = staff_client(bare, "en")
    assert client.get(reverse("admin:games_round_change", args=[played.pk])).status_code == 403
    assert client.get(reverse("admin:games_round_changelist")).status_code == 403


OLD_CSV_COLUMNS = [
    "round_id", "room", "table_id", "number", "started_at", "settled_at", "username",
    "position", "special", "auto", "escaped", "water", "delta", "penalty", "flags",
    "transaction_id", "commitment", "status", "cards", "arrangement",
]  # fmt: skip


def test_the_rounds_csv_appends_balances_cuts_transfers_fee_and_rules(
    played: Round, admin_user: User
) -> None:
    import csv
    import io

    response = staff_client(admin_user, "en").post(
        reverse("admin:games_round_changelist"),
        {"action": "export_rounds_csv", "_selected_action": played.pk},
    )
    text = b"".join(response.streaming_content).decode("utf-8-sig")  # type: ignore[attr-defined]
    header, *rows = list(csv.reader(io.StringIO(text)))
    assert header[: len(OLD_CSV_COLUMNS)] == OLD_CSV_COLUMNS
    assert header[len(OLD_CSV_COLUMNS) :] == [
        "balance_before", "cut_owed", "cut_paid", "transfers_paid", "transfers_received",
        "table_fee", "rule_configuration_id", "rule_configuration", "rule_version", "base_score",
    ]  # fmt: skip
    result = played.result
    rules = played.table.room.rules
    version = rules.history.order_by("-history_id").first()
    assert version is not None
    ids = {u.username: str(u.pk) for u in User.objects.filter(username__in=NAMES)}
    for row in rows:
        line = dict(zip(header, row, strict=True))
        uid = ids[line["username"]]
        assert int(line["balance_before"]) == int(played.balances[uid])
        paid = sum(t["coins"] for t in result["transfers"] if str(t["from"]) == uid)
        received = sum(t["coins"] for t in result["transfers"] if str(t["to"]) == uid)
        assert (int(line["transfers_paid"]), int(line["transfers_received"])) == (paid, received)
        owed = sum(c["owed"] for c in result["cuts"] if str(c["from"]) == uid)
        assert int(line["cut_owed"]) == owed
        assert line["table_fee"] == "0"
        assert line["rule_configuration"] == rules.name
        assert line["rule_configuration_id"] == str(rules.pk)
        assert line["rule_version"] == str(version.history_id)
        assert line["base_score"] == str(played.config["base_score"])


def test_a_configuration_edited_after_the_table_opened_leaves_the_rounds_version(
    played: Round, admin_user: User
) -> None:
    """The table read its rules when it opened: a later edit is a later version, not the
    round's (the round still names the version its snapshot was taken from)."""
    rules = played.table.room.rules
    before = rules.history.order_by("-history_id").first()
    assert before is not None
    rules.description = "edited after the table opened"
    rules.save()
    after = rules.history.order_by("-history_id").first()
    assert after is not None and after.history_id != before.history_id
    response = staff_client(admin_user, "en").get(
        reverse("admin:games_round_change", args=[played.pk])
    )
    row = re.search(r'(?s)<tr id="round-rules">(.*?)</tr>', response.content.decode())
    assert row is not None
    assert f"#{before.history_id}<" in row.group(1) and f"#{after.history_id}<" not in row.group(1)

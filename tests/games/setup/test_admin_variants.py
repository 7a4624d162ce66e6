"""The rule configuration admin and the variant decks of RULES.md §12: the deck fields, the
open rooms a deck change must still seat, "New from preset" (§12.6) and the special-hand
figures of the configuration's own deck."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from games.models import RuleConfiguration, SpecialHandSetting
from games.rules import stats
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.rules.presets import PRESET_IDS, PRESETS, preset_config
from games.rules.stats import CLASSIC_SHAPE, DealShape, cache_filename, save_deals
from games.setup import admin as games_admin
from games.setup import special_stats
from games.setup.presets import PresetForm
from games.setup.selectors import rule_configuration_default
from lobby.models import Room, RoomStatus
from tests.games.setup.test_admin import change_url, errors_of, form_data, logged_in, state

pytestmark = pytest.mark.django_db

FROM_PRESET = "admin:games_ruleconfiguration_from_preset"


def text_of(response: Any) -> str:
    """The page's visible text, on one line."""
    html = response.content.decode()
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def configurations() -> list[tuple[Any, ...]]:
    """Every configuration and special-hand row: what a refused request must leave as it was."""
    return [
        *RuleConfiguration.objects.order_by("pk").values_list("pk", "name", "updated_at"),
        *SpecialHandSetting.objects.order_by("pk").values_list("pk", "configuration_id"),
    ]


def open_room(config: RuleConfiguration, owner: User, *, seats: int, name: str) -> Room:
    return Room.objects.create(
        name=name, rules=config, base_score=100, seats=seats, owner=owner, entry_minimum=0
    )


# -- the deck fields -------------------------------------------------------------------------


def test_the_deck_fieldset_and_the_five_of_a_kind_bonuses_render(rules_admin: User) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).get(change_url(config))
    html = response.content.decode()

    assert response.status_code == 200
    assert "Deck (RULES.md §12)" in html
    for name in (
        "extra_suits",
        "jokers",
        "spare_cards",
        "bonus_middle_five_of_a_kind",
        "bonus_back_five_of_a_kind",
    ):
        assert f'name="{name}"' in html, name
    # The deck fields come in their own fieldset, the bonuses with the other row bonuses.
    deck = html[html.index("Deck (RULES.md §12)") :]
    deck = deck[: deck.index("</fieldset>")]
    assert 'name="extra_suits"' in deck and 'name="bonus_back_five_of_a_kind"' not in deck
    rows = html[html.index('name="bonus_back_straight_flush"') :]
    rows = rows[: rows.index("</fieldset>")]
    assert 'name="bonus_middle_five_of_a_kind"' in rows
    assert "Deck: Classic, 52 cards; 13 dealt to each player; up to 4 players." in text_of(response)


def test_a_deck_change_is_saved_through_the_engine_with_history(rules_admin: User) -> None:
    config = rule_configuration_default()

    response = logged_in(rules_admin).post(
        change_url(config),
        form_data(config, extra_suits=1, jokers=2, bonus_middle_five_of_a_kind=12),
    )

    assert response.status_code == 302, errors_of(response)
    engine = RuleConfiguration.objects.get(pk=config.pk).engine_config()
    assert (engine.extra_suits, engine.jokers, engine.max_seats) == (1, 2, 5)
    assert dict(engine.row_bonus)["middle.five_of_a_kind"] == 12
    record = config.history.first()
    assert (record.history_user, record.extra_suits, record.jokers) == (rules_admin, 1, 2)


def _six_player_config() -> RuleConfiguration:
    """78 cards and a home run from 6 players, valid only with two extra suits (§12.5)."""
    return RuleConfiguration.from_engine(
        RuleConfig(extra_suits=2, home_run_min_players=6), name="Six 六人"
    )


def test_a_deck_the_other_rules_do_not_fit_is_refused_with_the_engines_message(
    rules_admin: User,
) -> None:
    config = _six_player_config()
    before = state(config)
    with pytest.raises(ConfigError) as refused:
        RuleConfig(extra_suits=1, home_run_min_players=6)

    response = logged_in(rules_admin).post(change_url(config), form_data(config, extra_suits=1))

    assert response.status_code == 200
    errors = errors_of(response)
    # In words: the field's name, not the engine's key (home_run_min_players).
    assert str(refused.value).split(" ", 1)[1] in errors  # must be between 2 and 5, got 6
    assert "home_run_min_players" not in errors
    assert state(config) == before


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"extra_suits": 3}, "Select a valid choice"),
        ({"jokers": 1}, "Select a valid choice"),
        ({"spare_cards": "three"}, "Select a valid choice"),
        ({"bonus_back_five_of_a_kind": -1}, "greater than or equal to 0"),
        ({"bonus_middle_five_of_a_kind": 10_001}, "must be between 0 and 10000"),
    ],
)
def test_an_invalid_deck_or_bonus_value_is_refused(
    rules_admin: User, changes: dict[str, Any], message: str
) -> None:
    config = rule_configuration_default()
    before = state(config)

    response = logged_in(rules_admin).post(change_url(config), form_data(config, **changes))

    assert response.status_code == 200
    assert message in errors_of(response)
    assert state(config) == before


# -- a deck change must still seat the open rooms -------------------------------------------------


def test_a_deck_change_leaving_an_open_room_short_of_seats_is_refused(
    rules_admin: User, admin_user: User
) -> None:
    config = rule_configuration_default()
    open_room(config, admin_user, seats=4, name="Four friends")
    open_room(config, admin_user, seats=3, name="Three is fine")
    before = state(config)
    # 52 cards, 16 each: 3 seats (RULES.md §12.4).
    assert RuleConfig(spare_cards=3).max_seats == 3

    response = logged_in(rules_admin).post(
        change_url(config), form_data(config, extra_suits=0, spare_cards=3)
    )

    assert response.status_code == 200
    errors = errors_of(response)
    assert "This deck seats at most 3 players" in errors
    assert "Four friends" in errors and "4 seats" in errors
    assert "Three is fine" not in errors
    assert state(config) == before


def test_a_deck_change_names_at_most_ten_rooms(rules_admin: User, admin_user: User) -> None:
    config = rule_configuration_default()
    for i in range(12):
        open_room(config, admin_user, seats=4, name=f"Room {i:02d}")

    response = logged_in(rules_admin).post(change_url(config), form_data(config, spare_cards=3))

    errors = errors_of(response)
    assert "Room 09" in errors and "Room 10" not in errors
    assert "and 2 more" in errors


def test_closed_rooms_and_rooms_of_other_configurations_do_not_stop_a_deck_change(
    rules_admin: User, admin_user: User
) -> None:
    config = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    closed = open_room(config, admin_user, seats=4, name="Closed")
    Room.objects.filter(pk=closed.pk).update(status=RoomStatus.CLOSED, closed_at=timezone.now())
    open_room(other, admin_user, seats=4, name="Elsewhere")

    response = logged_in(rules_admin).post(change_url(config), form_data(config, spare_cards=3))

    assert response.status_code == 302, errors_of(response)
    assert RuleConfiguration.objects.get(pk=config.pk).engine_config().max_seats == 3


def test_an_open_room_does_not_stop_other_changes(rules_admin: User, admin_user: User) -> None:
    config = rule_configuration_default()
    open_room(config, admin_user, seats=4, name="Four friends")

    response = logged_in(rules_admin).post(
        change_url(config), form_data(config, gun_water=4, change_reason="Fewer guns")
    )

    assert response.status_code == 302, errors_of(response)


# -- new from preset ---------------------------------------------------------------------------


def test_the_changelist_links_to_new_from_preset_for_those_who_may_add(
    rules_admin: User, support: User
) -> None:
    changelist = reverse("admin:games_ruleconfiguration_changelist")
    assert reverse(FROM_PRESET) in logged_in(rules_admin).get(changelist).content.decode()
    assert reverse(FROM_PRESET) not in logged_in(support).get(changelist).content.decode()


def test_the_preset_page_lists_every_preset_with_a_free_default_name(rules_admin: User) -> None:
    # games/0012 made "癞子 Jokers" and games/0021 "福州 Fuzhou" (made again after a flush);
    # "地区 Regional" is removed here.
    for preset_id, name in (("laizi", "癞子 Jokers"), ("fuzhou", "福州 Fuzhou")):
        if not RuleConfiguration.objects.filter(name=name).exists():
            RuleConfiguration.from_engine(preset_config(preset_id), name=name)
    RuleConfiguration.objects.filter(name="地区 Regional").delete()

    response = logged_in(rules_admin).get(reverse(FROM_PRESET))

    assert response.status_code == 200
    html = response.content.decode()
    text = text_of(response)
    for preset in PRESETS.values():
        assert f'id="preset-{preset.id}"' in html
        assert preset.zh in text and preset.en in text and preset.source in text
    assert 'value="癞子 Jokers (2)"' in html  # taken: suffixed
    assert 'value="福州 Fuzhou (2)"' in html
    assert 'value="地区 Regional"' in html
    assert "csrfmiddlewaretoken" in html
    # One line of settings each.
    assert "65 cards, 13 each, up to 5 players; five of a kind" in text
    assert "only Supreme dragon 108, Dragon 36 enabled" in text
    assert "gun payment: double the water" in text


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_each_preset_creates_its_configuration_with_history(
    rules_admin: User, preset_id: str
) -> None:
    name = f"{preset_id} from the admin"

    response = logged_in(rules_admin).post(
        reverse(FROM_PRESET), {"preset": preset_id, "name": name}
    )

    created = RuleConfiguration.objects.get(name=name)
    assert response.status_code == 302
    assert response["Location"] == change_url(created)
    assert created.engine_config().to_dict() == preset_config(preset_id).to_dict()
    assert created.engine_config().to_dict() == PRESETS[preset_id].config.to_dict()
    assert not created.is_default
    [record] = created.history.all()
    assert (record.history_type, record.history_user) == ("+", rules_admin)
    assert preset_id in record.history_change_reason
    rows = SpecialHandSetting.history.filter(configuration_id=created.pk)
    assert rows.count() == len(SPECIAL_IDS)
    assert {(r.history_type, r.history_user_id) for r in rows} == {("+", rules_admin.pk)}
    assert all(preset_id in r.history_change_reason for r in rows)
    assert LogEntry.objects.filter(
        object_id=str(created.pk), action_flag=ADDITION, user=rules_admin
    ).exists()
    # Its change page opens and can be edited like any other.
    page = logged_in(rules_admin).get(change_url(created))
    assert page.status_code == 200
    saved = logged_in(rules_admin).post(change_url(created), form_data(created, gun_water=5))
    assert saved.status_code == 302, errors_of(saved)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"preset": "nope", "name": "Nope"}, "There is no preset nope."),
        ({"preset": "", "name": "Empty"}, "This field is required."),
        ({"preset": "laizi", "name": "   "}, "This field is required."),
        ({"preset": "laizi", "name": "x" * 81}, "at most 80 characters"),
        ({"preset": ["laizi", "nope"], "name": "Two"}, None),
    ],
)
def test_a_bad_preset_or_name_creates_nothing(
    rules_admin: User, data: dict[str, Any], message: str | None
) -> None:
    before = configurations()

    response = logged_in(rules_admin).post(reverse(FROM_PRESET), data)

    if message is None:  # several values: the last one counts, and "nope" is no preset
        message = "There is no preset nope."
    assert response.status_code == 400
    assert message in text_of(response)
    assert configurations() == before


def test_a_taken_name_is_refused_and_creates_nothing(rules_admin: User) -> None:
    taken = rule_configuration_default().name
    before = configurations()

    response = logged_in(rules_admin).post(
        reverse(FROM_PRESET), {"preset": "duoyise", "name": f"  {taken} "}
    )

    assert response.status_code == 400
    assert f"A configuration named “{taken}” already exists" in text_of(response)
    assert configurations() == before


def test_a_name_taken_while_creating_is_refused(
    rules_admin: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another admin takes the name after the form's check: the database refuses it."""
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Raced")
    monkeypatch.setattr(PresetForm, "clean_name", lambda form: form.cleaned_data["name"])
    before = configurations()

    response = logged_in(rules_admin).post(
        reverse(FROM_PRESET), {"preset": "laizi", "name": "Raced"}
    )

    assert response.status_code == 400
    assert "A configuration named “Raced” already exists" in text_of(response)
    assert configurations() == before
    assert RuleConfiguration.objects.get(name="Raced").pk == other.pk


def test_only_those_who_may_add_see_or_use_the_preset_page(support: User) -> None:
    before = configurations()
    client = logged_in(support)

    assert client.get(reverse(FROM_PRESET)).status_code == 403
    response = client.post(reverse(FROM_PRESET), {"preset": "laizi", "name": "Support's"})

    assert response.status_code == 403
    assert configurations() == before


def test_the_preset_page_needs_staff_sign_in(client: Client, django_user_model: Any) -> None:
    before = configurations()
    response = client.post(reverse(FROM_PRESET), {"preset": "laizi", "name": "Anon"})
    assert response.status_code == 302 and "/login/" in response["Location"]

    player = django_user_model.objects.create_user(username="player", password="not-used-1")
    response = logged_in(player).post(reverse(FROM_PRESET), {"preset": "laizi", "name": "P"})
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert configurations() == before


def test_creating_from_a_preset_needs_the_csrf_token(rules_admin: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(rules_admin)
    before = configurations()

    response = client.post(reverse(FROM_PRESET), {"preset": "laizi", "name": "No token"})

    assert response.status_code == 403
    assert configurations() == before


def test_creating_from_presets_is_rate_limited(rules_admin: User, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.rule_preset": "2/minute"}
    client = logged_in(rules_admin)

    assert client.post(reverse(FROM_PRESET), {"preset": "nope", "name": "A"}).status_code == 400
    assert client.post(reverse(FROM_PRESET), {"preset": "laizi", "name": "B"}).status_code == 302
    before = configurations()
    refused = client.post(reverse(FROM_PRESET), {"preset": "laizi", "name": "C"})

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "Too many configurations created" in text_of(refused)
    assert configurations() == before


# -- the special-hand figures of the configuration's own deck ---------------------------------


@pytest.fixture
def stats_cache(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = 60
    settings.SPECIAL_STATS_SEED = 5
    monkeypatch.setattr(special_stats, "_loaded", {})
    return tmp_path


def test_the_figures_are_those_of_the_configurations_own_deck(
    rules_admin: User, stats_cache: Path
) -> None:
    classic = rule_configuration_default()
    # The same rules with a second suit of diamonds (多一色): only the deck differs.
    extra = RuleConfiguration.from_engine(
        RuleConfig.from_dict({**classic.engine_config().to_dict(), "extra_suits": 1}),
        name="Extra suit 多一色 test",
    )
    shape = DealShape(extra_suits=1)
    special_stats.special_deals_build()
    special_stats.special_deals_build(shape=shape)
    assert (stats_cache / cache_filename(60, 5, shape=shape)).exists()
    client = logged_in(rules_admin)

    classic_text = text_of(client.get(change_url(classic)))
    extra_text = text_of(client.get(change_url(extra)))

    assert "Deck: Classic, 52 cards; 13 dealt to each player; up to 4 players." in classic_text
    assert "60 four-player deals (240 hands, seed 5)" in classic_text
    assert (
        "Deck: Extra suit, 65 cards (52 standard cards + 1 extra suit of diamonds); 13 dealt "
        "to each player; up to 5 players."
    ) in extra_text
    assert "60 deals of 5 players, from this configuration's deck (300 hands, seed 5)" in (
        extra_text
    )

    def table(text: str) -> str:
        return text[text.index("hands that make it") : text.index("From a simulation")]

    assert table(classic_text) != table(extra_text)
    # The figures are the engine's, over deals of the 65-card deck.
    simulated = stats.simulate_deals(60, 5, shape=shape)
    figures = stats.special_stats(simulated, extra.engine_config())
    assert simulated.players == 5
    assert f"{figures.expected_water_per_deal:.4f}" in table(extra_text)
    qualifying = " ".join(str(row.qualifying) for row in figures.rows)
    cells = re.findall(r"<td>(\d+)</td>\s*</tr>", client.get(change_url(extra)).content.decode())
    assert " ".join(cells) == qualifying


def test_a_variant_decks_figures_are_built_in_the_background(
    rules_admin: User, stats_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(
        games_admin, "special_deals_build_in_background", lambda *args: asked.append(args)
    )
    monkeypatch.setattr(stats, "simulate_deals", lambda *a, **k: pytest.fail("in the request"))
    jokers = RuleConfiguration.from_engine(preset_config("laizi"), name="Jokers 癞子 test")

    response = logged_in(rules_admin).get(change_url(jokers))

    text = text_of(response)
    assert "The statistics of the special hands of this deck are being computed" in text
    assert "60 deals of 4 players" in text
    assert "Deck: Jokers, 54 cards (52 standard cards + 2 jokers)" in text
    assert asked == [(DealShape(jokers=2),)]
    assert list(stats_cache.iterdir()) == []


def test_a_cache_of_another_deck_is_not_used(stats_cache: Path) -> None:
    shape = DealShape(extra_suits=2)
    path = stats_cache / cache_filename(60, 5, shape=shape)
    masks = np.zeros((60, 6), dtype=np.uint16)
    # A file of classic deals under the variant's name is not taken for the variant.
    save_deals(path, stats.SimulatedDeals(masks, 5))
    assert special_stats.special_deals_ready(shape) is None
    save_deals(path, stats.SimulatedDeals(masks, 5, shape))
    ready = special_stats.special_deals_ready(shape)
    assert ready is not None and ready.shape == shape
    assert special_stats.special_deals_ready() is None  # the classic file is not there


def test_the_background_thread_builds_every_deck_asked_for(
    stats_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    built: list[DealShape] = []

    def build(where: special_stats.Where) -> None:
        assert release.wait(10)
        built.append(where[4])

    monkeypatch.setattr(special_stats, "_build", build)
    jokers, spare = DealShape(jokers=2), DealShape(extra_suits=1, spare_cards=3)

    assert special_stats.special_deals_build_in_background(jokers) is True
    assert special_stats.special_deals_build_in_background(spare) is True  # queued
    assert special_stats.special_deals_build_in_background(jokers) is False  # already asked
    assert special_stats.special_deals_build_in_background() is True
    thread = special_stats._thread
    assert thread is not None
    release.set()
    thread.join(10)

    assert built == [jokers, spare, CLASSIC_SHAPE]
    assert not special_stats._asked and not special_stats._queue
    # Asked again once built: built again (it then reads the file).
    assert special_stats.special_deals_build_in_background(jokers) is True
    assert special_stats._thread is not None
    special_stats._thread.join(10)
    assert built[-1] == jokers


def test_the_deck_and_the_preset_page_speak_chinese(rules_admin: User) -> None:
    client = logged_in(rules_admin)
    zh = {"accept-language": "zh-hans"}
    extra = RuleConfiguration.from_engine(preset_config("duoyise"), name="多一色 zh test")

    change = text_of(client.get(change_url(extra), headers=zh))
    changelist = client.get(reverse("admin:games_ruleconfiguration_changelist"), headers=zh)
    presets = text_of(client.get(reverse(FROM_PRESET), headers=zh))

    assert "牌组（RULES.md §12）" in change
    assert "牌组：多一色，65 张牌（52 张标准牌 + 1 副额外方块）；每人发 13 张；最多 5 人。" in (
        change
    )
    assert "从预设新建" in changelist.content.decode()
    assert "从预设新建配置" in presets
    summary = "65 张牌，每人 13 张，最多 5 人；五同；只启用 至尊清龙 108、一条龙 36，按此顺序排名"
    assert summary in presets


def test_an_admins_edit_keeps_the_preset_in_step_with_the_rules(rules_admin: User) -> None:
    config = RuleConfiguration.from_engine(preset_config("fuzhou"), name="Fuzhou, ours")
    client = logged_in(rules_admin)
    assert config.preset == "fuzhou"

    response = client.post(change_url(config), form_data(config, arrange_seconds=45))
    assert response.status_code == 302, errors_of(response)
    assert RuleConfiguration.objects.get(pk=config.pk).preset == "fuzhou"  # pace only

    response = client.post(
        change_url(config), form_data(config, specials={"dragon": {"water": 30}})
    )
    assert response.status_code == 302, errors_of(response)
    assert RuleConfiguration.objects.get(pk=config.pk).preset == ""  # its own rules now

"""The rules of a table as a player reads them: a one-line summary for the table's header chip
(``福州 · 52张 · 打枪×2``) and the settings that matter at the table, in the page's language."""

from __future__ import annotations

from typing import TypedDict

from django.utils.translation import gettext, ngettext, pgettext

from games import labels
from games.rules.config import RuleConfig
from games.variants import variant_badge


class SheetRow(TypedDict):
    key: str  # a stable id for tests and styles
    label: str
    value: str


class RulesSheet(TypedDict):
    name: str  # the configuration's name in the page's language
    badge: str  # its variant badge: 福州, 多一色·癞子, Classic
    summary: str  # the chip: badge · cards · gun
    details: str  # the summary after the badge: cards · gun (a phone shows the badge only)
    rows: list[SheetRow]
    specials: list[SheetRow]  # enabled special hands, highest first, with their water


def _gun_short(config: RuleConfig) -> str:
    if config.gun_mode == "double":
        return gettext("gun ×2")
    return gettext("gun +%(water)s") % {"water": config.gun_water}


def _cards(config: RuleConfig) -> str:
    return gettext("%(count)s cards") % {"count": config.deck.size}


def _deck(config: RuleConfig) -> str:
    parts = [_cards(config)]
    if config.extra_suits:
        parts.append(
            ngettext(
                "%(count)d extra suit of diamonds",
                "%(count)d extra suits of diamonds",
                config.extra_suits,
            )
            % {"count": config.extra_suits}
        )
    if config.jokers:
        parts.append(gettext("%(count)d wild jokers") % {"count": config.jokers})
    if config.spare_cards:
        parts.append(gettext("%(hand)s each, play 13") % {"hand": config.hand_size})
    else:
        parts.append(gettext("13 each"))
    parts.append(gettext("up to %(seats)s players") % {"seats": config.max_seats})
    return ("；" if labels.chinese() else "; ").join(parts)


def _gun(config: RuleConfig) -> str:
    if config.gun_mode == "double":
        text = gettext("a gun doubles the pair's water; a home run doubles it again")
    else:
        text = gettext("a gun wins %(gun)s more water; a home run %(home)s from each") % {
            "gun": config.gun_water,
            "home": config.home_run_water,
        }
    if config.run_over_counts_as_gun:
        text += gettext("; a run-over counts as a gun")
    return text


def _bonuses(config: RuleConfig) -> str:
    names = {"front": gettext("front"), "middle": gettext("middle"), "back": gettext("back")}
    parts = []
    for key, water in config.row_bonus:
        if not water:
            continue
        row, category = key.split(".", 1)
        if category == "five_of_a_kind" and not config.five_of_a_kind:
            continue
        parts.append(f"{names[row]} {labels.category_name(category)} +{water}")
    separator = "、" if labels.chinese() else ", "
    return separator.join(parts) or gettext("none")


def _row_water(config: RuleConfig) -> list[SheetRow]:
    """The row water (RULES.md §7.1), shown only when it is not the usual 1."""
    if config.row_water == 1:
        return []
    value = gettext("the winner of a row wins %(water)s water, plus its row bonus") % {
        "water": config.row_water
    }
    return [{"key": "row_water", "label": gettext("Row water"), "value": value}]


def rules_sheet(config: RuleConfig, *, name: str, preset: str, base_score: int) -> RulesSheet:
    """What the table's rules chip and its sheet show for ``config`` at ``base_score``."""
    badge = variant_badge(config, labels.chinese(), preset)
    cards = pgettext("rules chip", "%(count)s cards") % {"count": config.deck.size}
    details = " · ".join([cards, _gun_short(config)])
    summary = f"{badge} · {details}"
    penalty = config.penalty_multiplier * base_score
    escape = gettext("%(coins)s coins (%(times)s × base score)") % {
        "coins": f"{penalty:,}",
        "times": config.penalty_multiplier,
    }
    if config.escape_covers_losses:
        escape += gettext("; the escaper also pays the other losers' losses")
    seconds = gettext("%(seconds)s s")
    rows: list[SheetRow] = [
        {"key": "deck", "label": gettext("Deck"), "value": _deck(config)},
        {"key": "gun", "label": gettext("Gun and home run"), "value": _gun(config)},
        {
            "key": "home_run",
            "label": gettext("Home run"),
            "value": gettext("guns every other player, at least %(n)s players")
            % {"n": config.home_run_min_players},
        },
        *_row_water(config),
        {"key": "bonus", "label": gettext("Row bonuses"), "value": _bonuses(config)},
        {
            "key": "a2345",
            "label": gettext("A2345"),
            "value": gettext("the lowest straight")
            if config.a2345 == "lowest"
            else gettext("the second-highest straight"),
        },
        {"key": "escape", "label": gettext("Escape penalty"), "value": escape},
        {
            "key": "arrange",
            "label": gettext("Time to arrange"),
            "value": seconds % {"seconds": config.arrange_seconds},
        },
        {
            "key": "ready",
            "label": gettext("Time to press Ready"),
            "value": seconds % {"seconds": config.ready_seconds},
        },
        {
            "key": "special_choice",
            "label": gettext("Time to choose a special hand"),
            "value": seconds % {"seconds": config.special_choice_seconds},
        },
    ]
    specials: list[SheetRow] = [
        {
            "key": s.id,
            "label": labels.special_name(s.id),
            "value": gettext("%(water)s water") % {"water": s.water},
        }
        for s in config.enabled_specials
    ]
    return {
        "name": labels.data_name(name),
        "badge": badge,
        "summary": summary,
        "details": details,
        "rows": rows,
        "specials": specials,
    }

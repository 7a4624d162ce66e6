"""Which variant deck a configuration plays (RULES.md §12), as the lobby and the table name it.

A configuration's deck settings (``extra_suits``, ``jokers``, ``spare_cards``) give it one or
more *variant tags*: ``duosanzhang`` (多三张, three spare cards), ``duoyise`` / ``duoerse``
(多一色 / 多两色, one or two extra diamond suits, without spare cards) and ``laizi`` (癞子,
jokers). A configuration with none of them is ``classic``. The lobby shows the tags as a short
badge and filters rooms by one of them (:func:`variant_filter`, on the room's configuration,
so a room always shows what it plays now).
"""

from __future__ import annotations

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from games.rules.config import RuleConfig

CLASSIC = "classic"
# Slug -> (Chinese name, English name, help). The order is the lobby filter's.
VARIANTS: dict[str, tuple[str, str]] = {
    CLASSIC: ("经典", "Classic"),
    "duoyise": ("多一色", "Extra suit"),
    "duoerse": ("多两色", "Two extra suits"),
    "laizi": ("癞子", "Jokers"),
    "duosanzhang": ("多三张", "Spare cards"),
}
VARIANT_HELP = {
    CLASSIC: _("52 cards, 13 each"),
    "duoyise": _("65 cards: a second suit of diamonds, up to 5 players"),
    "duoerse": _("78 cards: two more suits of diamonds, up to 6 players"),
    "laizi": _("two jokers, wild in their row"),
    "duosanzhang": _("16 cards each, play the best 13"),
}


def variant_tags(config: RuleConfig) -> tuple[str, ...]:
    """The variant tags of ``config`` (``("classic",)`` for the classic deck)."""
    tags: list[str] = []
    if config.spare_cards:
        tags.append("duosanzhang")
    elif config.extra_suits == 1:
        tags.append("duoyise")
    elif config.extra_suits == 2:
        tags.append("duoerse")
    if config.jokers:
        tags.append("laizi")
    return tuple(tags) or (CLASSIC,)


def variant_filter(slug: str, prefix: str = "rules__") -> Q:
    """Rooms (``prefix`` leads to the configuration) whose deck carries tag ``slug``.

    Raises ``KeyError`` for an unknown slug (callers validate first)."""
    f = {
        CLASSIC: {"extra_suits": 0, "jokers": 0, "spare_cards": 0},
        "duoyise": {"extra_suits": 1, "spare_cards": 0},
        "duoerse": {"extra_suits": 2, "spare_cards": 0},
        "laizi": {"jokers": 2},
        "duosanzhang": {"spare_cards": 3},
    }[slug]
    return Q(**{prefix + k: v for k, v in f.items()})


def variant_name(slug: str, chinese: bool) -> str:
    zh, en = VARIANTS[slug]
    return zh if chinese else en


def variant_badge(config: RuleConfig, chinese: bool) -> str:
    """The short badge: ``多一色``, ``多一色·癞子``, ``Extra suit · Jokers``…"""
    names = [variant_name(t, chinese) for t in variant_tags(config)]
    return ("·" if chinese else " · ").join(names)

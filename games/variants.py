"""Which variant deck a configuration plays (RULES.md §12), as the lobby and the table name it.

A configuration's deck settings (``extra_suits``, ``jokers``, ``spare_cards``) give it one or
more *variant tags*: ``duosanzhang`` (多三张, three spare cards), ``duoyise`` / ``duoerse``
(多一色 / 多两色, one or two extra diamond suits, without spare cards) and ``laizi`` (癞子,
jokers). On the 52-card deck, rules that play a preset of their own (``fuzhou`` 福州,
``regional`` 地区 of RULES.md §12.6, and the sources' ``shuangguai`` 双怪冲三, ``general`` 通用,
``original`` 原版) carry that preset's tag (``RuleConfiguration.preset``); any other is
``classic``. The lobby shows the tags as a short badge and filters rooms by one of them
(:func:`variant_filter`, on the room's configuration, so a room always shows what it plays
now).
"""

from __future__ import annotations

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from games.rules.config import RuleConfig

CLASSIC = "classic"
# Slug -> (Chinese name, English name, help). The order is the lobby filter's.
VARIANTS: dict[str, tuple[str, str]] = {
    CLASSIC: ("经典", "Classic"),
    "fuzhou": ("福州", "Fuzhou"),
    "regional": ("地区", "Regional"),
    "shuangguai": ("双怪冲三", "Double monster"),
    "general": ("通用", "General table"),
    "original": ("原版", "Original"),
    "duoyise": ("多一色", "Extra suit"),
    "duoerse": ("多两色", "Two extra suits"),
    "laizi": ("癞子", "Jokers"),
    "duosanzhang": ("多三张", "Spare cards"),
}
VARIANT_HELP = {
    CLASSIC: _("52 cards, 13 each"),
    "fuzhou": _("52 cards; a gun doubles the water; five special hands"),
    "regional": _("52 cards; regional special-hand water, bigger row bonuses"),
    "shuangguai": _("52 cards; the special hands of source 1, with double monster (双怪冲三)"),
    "general": _("52 cards; the general scoring table: a gun doubles the water"),
    "original": _("52 cards; the original row values: bigger middle-row bonuses"),
    "duoyise": _("65 cards: a second suit of diamonds, up to 5 players"),
    "duoerse": _("78 cards: two more suits of diamonds, up to 6 players"),
    "laizi": _("two jokers, wild in their row"),
    "duosanzhang": _("16 cards each, play the best 13"),
}


# The presets of the classic deck that have a tag of their own.
RULE_PRESETS = ("fuzhou", "regional", "shuangguai", "general", "original")


def variant_tags(config: RuleConfig, preset: str = "") -> tuple[str, ...]:
    """The variant tags of ``config``, whose rules play ``preset`` (a preset id, or "" for
    none or unknown); ``("classic",)`` for other rules of the classic deck."""
    if config.is_classic_deck and preset in RULE_PRESETS:
        return (preset,)
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
    classic_deck = {"extra_suits": 0, "jokers": 0, "spare_cards": 0}
    if slug == CLASSIC:
        return Q(**{prefix + k: v for k, v in classic_deck.items()}) & ~Q(
            **{prefix + "preset__in": RULE_PRESETS}
        )
    f = {
        **{preset: {**classic_deck, "preset": preset} for preset in RULE_PRESETS},
        "duoyise": {"extra_suits": 1, "spare_cards": 0},
        "duoerse": {"extra_suits": 2, "spare_cards": 0},
        "laizi": {"jokers": 2},
        "duosanzhang": {"spare_cards": 3},
    }[slug]
    return Q(**{prefix + k: v for k, v in f.items()})


def variant_name(slug: str, chinese: bool) -> str:
    zh, en = VARIANTS[slug]
    return zh if chinese else en


def variant_badge(config: RuleConfig, chinese: bool, preset: str = "") -> str:
    """The short badge: ``福州``, ``多一色``, ``多一色·癞子``, ``Extra suit · Jokers``…"""
    names = [variant_name(t, chinese) for t in variant_tags(config, preset)]
    return ("·" if chinese else " · ").join(names)

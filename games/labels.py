"""The game's terms as the pages the server renders show them: in the reader's language only.

The engine names row categories and special hands in both languages (``CATEGORY_ZH``,
``SpecialInfo.zh`` / ``.en``); a Chinese page shows 葫芦, an English page "Full house", never
both. Guns are told apart as RULES.md §7.2 does: a gun (打枪) wins all three rows, a run-over
(辗过) wins with a tied row and scores as a gun, and a home run (全垒打) is every gun of the
player who shot everyone. The engine's pair result says only ``gun`` or ``home_run``; the
run-over is read from the pair's rows (:func:`gun_kind`), so stored results need nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

from django.utils.translation import get_language, gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from games.rules.config import SPECIAL_BY_ID
from games.rules.hands import CATEGORY_ZH
from games.rules.presets import PRESETS

GUN = "gun"
RUN_OVER = "run_over"
HOME_RUN = "home_run"

# English names of the row categories (the Chinese ones are the engine's).
CATEGORY_EN = {
    "high_card": "High card",
    "pair": "Pair",
    "two_pair": "Two pair",
    "trips": "Trips",
    "straight": "Straight",
    "flush": "Flush",
    "full_house": "Full house",
    "quads": "Quads",
    "straight_flush": "Straight flush",
    "five_of_a_kind": "Five of a kind",
}
_CATEGORY_ZH = {category.name.lower(): zh for category, zh in CATEGORY_ZH.items()}

GUN_LABELS = {
    GUN: _("Gun"),
    RUN_OVER: _("Run-over"),
    HOME_RUN: _("Home run"),
}
TRANSFER_KINDS = {
    "settlement": _("settlement"),
    "cover": _("escaper covers a loss"),
}
# A table's phase (RULES.md §8) as staff pages show it.
PHASE_LABELS = {
    "waiting": pgettext_lazy("table phase", "waiting for players"),
    "dealing": pgettext_lazy("table phase", "dealing"),
    "special_choice": pgettext_lazy("table phase", "choosing special hands"),
    "arranging": pgettext_lazy("table phase", "arranging"),
    "comparing": pgettext_lazy("table phase", "comparing"),
    "settled": pgettext_lazy("table phase", "between rounds"),
}
AUTO_REASONS = {
    "timeout": _("time ran out"),
    "hosted": _("hosted (away)"),
    "escaped": _("escaped"),
}


def chinese() -> bool:
    """Whether the active language is Chinese."""
    return (get_language() or "").lower().startswith("zh")


def category_name(category: str) -> str:
    """A row category's name (``full_house``: 葫芦 or "Full house"); an unknown id as is."""
    names = _CATEGORY_ZH if chinese() else CATEGORY_EN
    return names.get(category, category)


def special_name(special: str) -> str:
    """A special hand's name (``six_pairs``: 六对半 or "Six pairs"); an unknown id as is."""
    info = SPECIAL_BY_ID.get(special)
    if info is None:
        return special
    return info.zh if chinese() else info.en


def gun_kind(pair: Mapping[str, Any]) -> str | None:
    """``home_run``, ``run_over``, ``gun`` or None for a pair of a stored result (RULES.md
    §7.2): a gun whose rows hold a tie is a run-over, unless it is part of a home run."""
    gun = pair.get("gun")
    if not gun:
        return None
    if gun == HOME_RUN:
        return HOME_RUN
    rows = pair.get("rows")
    return RUN_OVER if rows is not None and 0 in rows else GUN


def gun_label(kind: str | None) -> str:
    """The label of :func:`gun_kind`'s answer ("" for no gun)."""
    return "" if kind is None else str(GUN_LABELS.get(kind, kind))


def transfer_kind_label(kind: str) -> str:
    """A settlement transfer's kind (``settlement``, ``cover``) in words."""
    return str(TRANSFER_KINDS.get(kind, kind))


def phase_label(phase: str) -> str:
    """A table's phase in words ("waiting" → "waiting for players"); an unknown one as is."""
    return str(PHASE_LABELS.get(phase, phase))


def auto_label(reason: str) -> str:
    """Why the server played for a player (``timeout``, ``hosted``, ``escaped``) in words."""
    return str(AUTO_REASONS.get(reason, reason)) if reason else ""


def row_marks(rows: list[int] | None) -> str:
    """A pair's row results from its first player's side: "won · tie · lost" (front, middle,
    back), or "" for a pair with a special hand (no rows compared)."""
    if rows is None:
        return ""
    words = {1: gettext("won"), 0: gettext("tie"), -1: gettext("lost")}
    names = (gettext("front"), gettext("middle"), gettext("back"))
    return " · ".join(
        f"{name} {words[(r > 0) - (r < 0)]}" for name, r in zip(names, rows, strict=False)
    )


# -- names the platform gives its own data --------------------------------------------------

# Names the platform itself gives rooms and rule configurations, stored in both languages
# (rows made before a page had a language): a page shows the half in its language. Names a
# player or an administrator typed are shown as entered.
DATA_NAMES: dict[str, tuple[str, str]] = {
    "Standard 标准": ("标准", "Standard"),
    "快速 Quick": ("快速", "Quick"),
    "快速 Quick · 机器人 Bots": ("快速 · 机器人", "Quick · Bots"),
    "多三张 Spare cards": ("多三张", "Spare cards"),
    "多两色 Two extra suits": ("多两色", "Two extra suits"),
    **{f"{p.zh} {p.en}": (p.zh, p.en) for p in PRESETS.values()},
}
# A room opened without a name ("alice 的桌 Table", lobby.checks.DEFAULT_ROOM_NAME).
_OWNER_TABLE = " 的桌 Table"
# What the platform appends: a taken name's number, a duplicate match's table number.
_NUMBERED = re.compile(r"^(?P<name>.+?)(?P<suffix> \(\d+\)| · \d+)$", re.S)


class DataNames(TypedDict):
    zh: str
    en: str


def data_names(name: str) -> DataNames:
    """Both halves of a name the platform gave (``快速 Quick``: 快速, Quick); a typed name twice."""
    known = DATA_NAMES.get(name)
    if known is not None:
        return {"zh": known[0], "en": known[1]}
    if name.endswith(_OWNER_TABLE) and len(name) > len(_OWNER_TABLE):
        owner = name[: -len(_OWNER_TABLE)]
        return {"zh": f"{owner} 的桌", "en": f"{owner}'s table"}
    numbered = _NUMBERED.match(name)
    if numbered is not None:
        base = data_names(numbered["name"])
        if base["zh"] != base["en"] or numbered["name"] in DATA_NAMES:
            return {"zh": base["zh"] + numbered["suffix"], "en": base["en"] + numbered["suffix"]}
    return {"zh": name, "en": name}


def data_names_or_none(name: str) -> DataNames | None:
    """:func:`data_names`, or None for a name someone typed (the same in both languages)."""
    names = data_names(name)
    return None if names["zh"] == names["en"] == name else names


def data_name(name: str) -> str:
    """A name as the page's language shows it (see :data:`DATA_NAMES`)."""
    names = data_names(name)
    return names["zh"] if chinese() else names["en"]

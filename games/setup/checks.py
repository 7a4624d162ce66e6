"""Checks on the money a rule configuration moves, beyond what the rules engine refuses.

The engine (``RuleConfig.from_dict``) refuses what cannot be played. These checks look at
what can be played but hurts the economy: an entry minimum of 0 or above what a new player
receives, an escape that costs nothing, one special hand whose water alone puts the table
out of a new player's reach. They are warnings: saving them needs a confirmation. Errors are
values no configuration may hold (a negative value, a rank beyond the number of special
hands). The admin calls :func:`configuration_money_checks` on every save; publishing a
configuration calls the same function.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.translation import gettext

from games.rules.config import SPECIAL_BY_ID, SPECIAL_IDS, RuleConfig


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: ``field`` is a plain field's name, or ``special:<id>:<water|order>`` for
    a special hand's row, or None for the configuration as a whole."""

    field: str | None
    message: str


def special_label(special: str) -> str:
    """A special hand's name in both languages: 六对半 (six pairs)."""
    info = SPECIAL_BY_ID.get(special)
    if info is None:
        return special
    return f"{info.zh} ({info.en.lower()})"


def special_field(special: str, name: str) -> str:
    return f"special:{special}:{name}"


def _coins(amount: int) -> str:
    return f"{amount:,}"


def configuration_money_checks(
    config: RuleConfig, grant: int, *, ranks: Mapping[str, int] | None = None
) -> tuple[list[Check], list[Check]]:
    """``(warnings, errors)`` of ``config`` against the sign-up grant ``grant`` (coins).

    ``ranks`` are the special hands' ranks as entered (1 is the highest), when the caller has
    them apart from the engine's order (the admin's rows).
    """
    warnings: list[Check] = []
    errors: list[Check] = []
    count = len(SPECIAL_IDS)
    for special, rank in sorted((ranks or {}).items()):
        if rank < 1 or rank > count:
            errors.append(
                Check(
                    special_field(special, "order"),
                    gettext("Rank of %(name)s: between 1 and %(count)s.")
                    % {"name": special_label(special), "count": count},
                )
            )
    for rule in config.specials:
        if rule.water < 0:
            errors.append(
                Check(
                    special_field(rule.id, "water"),
                    gettext("Water of %(name)s: at least 0.") % {"name": special_label(rule.id)},
                )
            )
    if config.escape_penalty_multiplier is not None and config.escape_penalty_multiplier < 0:
        errors.append(
            Check("escape_penalty_multiplier", gettext("The escape penalty is at least 0."))
        )
    if errors:
        return warnings, errors

    minimum = config.entry_minimum
    if minimum == 0:
        warnings.append(
            Check(
                None,
                gettext(
                    "The entry minimum is 0 coins (no special hand is enabled, or the highest "
                    "has no water): a player with no coins may sit down and cannot pay a loss."
                ),
            )
        )
    elif minimum > grant:
        warnings.append(
            Check(
                None,
                gettext(
                    "The entry minimum is %(minimum)s coins, above the sign-up grant of "
                    "%(grant)s coins: a new player can never sit at these rules."
                )
                % {"minimum": _coins(minimum), "grant": _coins(grant)},
            )
        )
    if config.penalty_multiplier == 0:
        warnings.append(
            Check(
                "escape_penalty_multiplier",
                gettext("The escape penalty is 0: leaving a round in play costs nothing."),
            )
        )
    for rule in config.enabled_specials:
        alone = rule.water * config.base_score * 3
        if alone > grant:
            warnings.append(
                Check(
                    special_field(rule.id, "water"),
                    gettext(
                        "Water of %(name)s: %(water)s makes the entry minimum %(minimum)s "
                        "coins (water × base score %(base)s × 3), above the sign-up grant of "
                        "%(grant)s coins."
                    )
                    % {
                        "name": special_label(rule.id),
                        "water": rule.water,
                        "minimum": _coins(alone),
                        "base": _coins(config.base_score),
                        "grant": _coins(grant),
                    },
                )
            )
    return warnings, errors

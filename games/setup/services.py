"""Writes of rule configurations. The admin calls these; every one is a single transaction.

History (who changed what, when) is recorded by django-simple-history on every ``save()``;
the user comes from the request (``HistoryRequestMiddleware``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import count

from django.db import transaction

from games.models import RuleConfiguration, SpecialHandSetting


def _lock_configurations() -> None:
    """Lock every configuration row, in primary-key order, until the transaction ends.

    Making a configuration the default must not race another: whoever comes second waits
    here, then sees the first one's default and unsets it. The table is small.
    """
    list(RuleConfiguration.objects.select_for_update().order_by("pk").values_list("pk"))


def _unset_other_defaults(*, keep: RuleConfiguration) -> None:
    _lock_configurations()
    others = RuleConfiguration.objects.filter(is_default=True)
    if keep.pk is not None:
        others = others.exclude(pk=keep.pk)
    for other in others:
        other.is_default = False
        other.save(update_fields=["is_default", "updated_at"])


@transaction.atomic
def rule_configuration_save(*, configuration: RuleConfiguration) -> RuleConfiguration:
    """Save (create or update); a configuration saved as the default replaces the old one.

    Exactly one configuration is the default (a partial unique constraint), so the previous
    default is unset first, in the same transaction.
    """
    if configuration.is_default:
        _unset_other_defaults(keep=configuration)
    configuration.save()
    return configuration


@transaction.atomic
def rule_configuration_set_default(*, configuration: RuleConfiguration) -> RuleConfiguration:
    """Make ``configuration`` the default and the previous default an ordinary one."""
    _unset_other_defaults(keep=configuration)
    if not configuration.is_default:
        configuration.is_default = True
        configuration.save(update_fields=["is_default", "updated_at"])
    return configuration


def _free_ranks(used: set[int]) -> Iterator[int]:
    return (rank for rank in count(1) if rank not in used)


@transaction.atomic
def special_hands_save(*, rows: Sequence[SpecialHandSetting]) -> None:
    """Save new or changed special-hand rows of one configuration, already validated.

    Ranks may be swapped: (configuration, rank) is unique and checked row by row, so rows
    that move are first parked on unused ranks (without a history record), then saved with
    their new rank (recorded).
    """
    if not rows:
        return
    configuration_ids = {row.configuration_id for row in rows}
    if len(configuration_ids) != 1:
        raise ValueError("special_hands_save saves the rows of one configuration")
    stored = dict(
        SpecialHandSetting.objects.select_for_update()
        .filter(configuration_id__in=configuration_ids)
        .order_by("pk")
        .values_list("pk", "order")
    )
    moved = [row for row in rows if row.pk is not None and stored.get(row.pk) != row.order]
    free = _free_ranks(set(stored.values()) | {row.order for row in rows})
    for row in moved:
        SpecialHandSetting.objects.filter(pk=row.pk).update(order=next(free))
    for row in rows:
        row.save()

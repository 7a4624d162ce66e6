"""Writes of rule configurations. The admin calls these; every one is a single transaction.

History (who changed what, when) is recorded by django-simple-history on every ``save()``;
the user comes from the request (``HistoryRequestMiddleware``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import count
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.economy import economy_settings
from games.models import RuleConfiguration, SpecialHandSetting
from games.rules.errors import ConfigError
from games.setup.checks import Check, configuration_money_checks


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


# -- drafts -------------------------------------------------------------------------------------

# Fields a draft does not copy: who it is, whether it is the default, its publication.
_NOT_COPIED = {
    "id",
    "name",
    "is_default",
    "is_draft",
    "published_at",
    "published_by",
    "publish_reason",
    "created_at",
    "updated_at",
}
_NAME_MAX_LENGTH = 80


def draft_name(name: str) -> str:
    """The first free name among "<name> (draft)", "<name> (draft 2)", … (cut to fit)."""
    for number in count(1):
        suffix = " (draft)" if number == 1 else f" (draft {number})"
        candidate = name[: _NAME_MAX_LENGTH - len(suffix)].rstrip() + suffix
        if not RuleConfiguration.objects.filter(name=candidate).exists():
            return candidate
    raise AssertionError("unreachable")


@transaction.atomic
def rule_configuration_save_as_draft(
    *, configuration: RuleConfiguration, user: Any
) -> RuleConfiguration:
    """ "Save as new": a draft copy of ``configuration`` as saved, its special hands included,
    named "<name> (draft)". No room can use it until it is published; its creation and its
    rows are recorded in the history with ``user``."""
    source = RuleConfiguration.objects.select_for_update().get(pk=configuration.pk)
    reason = f"Saved as a draft of {source.name}"[:100]
    values = {
        field.attname: getattr(source, field.attname)
        for field in RuleConfiguration._meta.concrete_fields
        if field.name not in _NOT_COPIED
    }
    draft = RuleConfiguration(**values, name=draft_name(source.name), is_draft=True)
    draft._history_user = user  # type: ignore[attr-defined]
    draft._change_reason = reason  # type: ignore[attr-defined]
    draft.save()
    for row in SpecialHandSetting.objects.filter(configuration=source).order_by("order"):
        copy = SpecialHandSetting(
            configuration=draft,
            special=row.special,
            enabled=row.enabled,
            water=row.water,
            order=row.order,
        )
        copy._history_user = user  # type: ignore[attr-defined]
        copy._change_reason = reason  # type: ignore[attr-defined]
        copy.save()
    draft.preset_refresh()
    return draft


class PublishRefused(Exception):
    """Publishing was refused: ``errors`` (never publishable as they are) or ``warnings``
    (publishable once confirmed), as ``games.setup.checks.Check`` values, or ``message``."""

    def __init__(
        self, *, message: str = "", errors: Sequence[Check] = (), warnings: Sequence[Check] = ()
    ) -> None:
        super().__init__(message or "; ".join(c.message for c in (*errors, *warnings)))
        self.message = message
        self.errors = list(errors)
        self.warnings = list(warnings)


def configuration_publish_checks(
    configuration: RuleConfiguration,
) -> tuple[list[Check], list[Check]]:
    """``(warnings, errors)`` of the money checks the admin runs at save, for the rules as
    saved (an invalid configuration is one error)."""
    try:
        config = configuration.engine_config()
    except ConfigError as exc:
        return [], [
            Check(None, gettext("The rules engine rejects these rules: %(error)s") % {"error": exc})
        ]
    grant = economy_settings().effective_signup_grant
    return configuration_money_checks(config, grant)


@transaction.atomic
def rule_configuration_publish(
    *, configuration_id: int, user: Any, reason: str, confirm_warnings: bool = False
) -> RuleConfiguration:
    """Make a draft usable by rooms, recording who, when and why (also in the history).

    Refused (:class:`PublishRefused`, nothing changes) for a configuration that is not a
    draft, without a reason, when the money checks find errors, or find warnings that are not
    confirmed."""
    configuration = RuleConfiguration.objects.select_for_update().get(pk=configuration_id)
    reason = reason.strip()
    if not configuration.is_draft:
        raise PublishRefused(
            message=gettext("%(name)s is already published.") % {"name": configuration.name}
        )
    if not reason:
        raise PublishRefused(message=gettext("Say why these rules are published."))
    warnings, errors = configuration_publish_checks(configuration)
    if errors:
        raise PublishRefused(errors=errors)
    if warnings and not confirm_warnings:
        raise PublishRefused(warnings=warnings)
    configuration.is_draft = False
    configuration.published_at = timezone.now()
    configuration.published_by = user
    configuration.publish_reason = reason[:100]
    configuration._history_user = user  # type: ignore[attr-defined]
    configuration._change_reason = f"Published: {reason}"[:100]  # type: ignore[attr-defined]
    configuration.save()
    return configuration

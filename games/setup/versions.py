"""The history of a rule configuration (django-simple-history): its versions, and what
changed between two of them, the special-hand rows included."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from games import labels
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting

_TRACKED = ("enabled", "water", "order")


# Their names in the history pages (the fields' verbose names carry a Chinese gloss).
_TRACKED_LABELS = {"enabled": _("enabled"), "water": _("water"), "order": _("rank")}


def value_words(field: str, value: Any, model: Any = RuleConfiguration) -> str:
    """A stored value as the page says it: Yes/No, — for none, a choice's label."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return gettext("Yes") if value else gettext("No")
    try:
        model_field = model._meta.get_field(field)
    except FieldDoesNotExist:
        return str(value)
    choices = dict(model_field.flatchoices or ())
    if value in choices:
        return str(choices[value])
    return str(value)


def configuration_versions(object_id: str) -> list[Any]:
    try:
        configuration_id = int(object_id)
    except ValueError:
        return []
    return list(
        RuleConfiguration.history.filter(id=configuration_id)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")[:100]
    )


def rule_configuration_versions_diff(*, old: Any, new: Any) -> list[dict[str, Any]]:
    """The plain fields that differ between two historical versions (simple-history's
    ``diff_against``), with their verbose names."""
    delta = new.diff_against(old, excluded_fields=["updated_at", "created_at"])
    out = []
    for change in delta.changes:
        try:
            label = str(RuleConfiguration._meta.get_field(change.field).verbose_name)
        except Exception:  # noqa: BLE001 - a field removed since: show its name
            label = change.field
        out.append(
            {
                "field": change.field,
                "label": label,
                "old": value_words(change.field, change.old),
                "new": value_words(change.field, change.new),
            }
        )
    return out


# The plain fields two configurations are compared on, in the change page's order.
_COMPARED = (*PLAIN_FIELDS, *ROW_BONUS_FIELDS)


def rule_configurations_compare(*, a: RuleConfiguration, b: RuleConfiguration) -> dict[str, Any]:
    """Every field and special hand of two configurations side by side, in words, each row
    saying whether the two differ."""
    fields = []
    for name in _COMPARED:
        try:
            label = str(RuleConfiguration._meta.get_field(name).verbose_name)
        except FieldDoesNotExist:
            label = name
        va, vb = getattr(a, name), getattr(b, name)
        fields.append(
            {
                "field": name,
                "label": label,
                "a": value_words(name, va),
                "b": value_words(name, vb),
                "differs": va != vb,
            }
        )
    rows_a = {row.special: row for row in a.special_hands.all()}
    rows_b = {row.special: row for row in b.special_hands.all()}
    specials = []
    for special in sorted(
        set(rows_a) | set(rows_b), key=lambda s: getattr(rows_a.get(s), "order", 99)
    ):
        ra, rb = rows_a.get(special), rows_b.get(special)
        values = {field: (getattr(ra, field, None), getattr(rb, field, None)) for field in _TRACKED}
        specials.append(
            {
                "special": special,
                "name": labels.special_name(special),
                "cells": [
                    {
                        "field": field,
                        "a": value_words(field, va, SpecialHandSetting),
                        "b": value_words(field, vb, SpecialHandSetting),
                        "differs": va != vb,
                    }
                    for field, (va, vb) in values.items()
                ],
                "differs": any(va != vb for va, vb in values.values()),
            }
        )
    return {
        "fields": fields,
        "specials": specials,
        "differences": sum(f["differs"] for f in fields) + sum(s["differs"] for s in specials),
    }


def version_until(version: Any) -> Any:
    """The end of a configuration version: the next version's date (None: still current).

    The admin saves the special-hand rows just after the configuration, so a version's rows
    are those recorded before the next version of the configuration."""
    following = (
        RuleConfiguration.history.filter(id=version.id, history_date__gt=version.history_date)
        .order_by("history_date", "history_id")
        .first()
    )
    return None if following is None else following.history_date


def _special_rows_at(configuration_id: int, until: Any) -> dict[str, Any]:
    """Each special-hand row of a configuration as it was before ``until`` (None: now)."""
    rows: dict[int, Any] = {}
    records = SpecialHandSetting.history.filter(configuration_id=configuration_id)
    if until is not None:
        records = records.filter(history_date__lt=until)
    for record in records.order_by("history_date", "history_id"):
        rows[record.id] = record
    return {r.special: r for r in rows.values() if r.history_type != "-"}


def special_hands_diff(*, configuration_id: int, old: Any, new: Any) -> list[dict[str, Any]]:
    """The special-hand rows' values that differ between the rows recorded before ``old``
    and those recorded before ``new`` (None: now)."""
    before, after = _special_rows_at(configuration_id, old), _special_rows_at(configuration_id, new)
    out = []
    for special in sorted(set(before) | set(after)):
        a, b = before.get(special), after.get(special)
        for field in _TRACKED:
            va, vb = getattr(a, field, None), getattr(b, field, None)
            if va != vb:
                out.append(
                    {
                        "special": special,
                        "name": labels.special_name(special),
                        "field": field,
                        "label": str(_TRACKED_LABELS[field]),
                        "old": value_words(field, va, SpecialHandSetting),
                        "new": value_words(field, vb, SpecialHandSetting),
                        "by": getattr(b, "history_user", None),
                    }
                )
    return out


def special_changes(object_id: str, limit: int = 300) -> list[dict[str, Any]]:
    """The history of a configuration's special-hand rows, newest first, with what changed."""
    try:
        configuration_id = int(object_id)
    except ValueError:
        return []
    records = list(
        SpecialHandSetting.history.filter(configuration_id=configuration_id)
        .select_related("history_user")
        .order_by("history_date", "history_id")
    )
    previous: dict[int, Any] = {}
    out = []
    for record in records:
        before = previous.get(record.id)
        changes = [
            (
                str(_TRACKED_LABELS[field]),
                value_words(field, getattr(before, field), SpecialHandSetting),
                value_words(field, getattr(record, field), SpecialHandSetting),
            )
            for field in _TRACKED
            if before is not None and getattr(before, field) != getattr(record, field)
        ]
        previous[record.id] = record
        out.append(
            {
                "record": record,
                "name": labels.special_name(record.special),
                "changes": changes,
            }
        )
    out.reverse()
    return out[:limit]

"""The history of a rule configuration (django-simple-history): its versions, and what
changed between two of them, the special-hand rows included."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from games import labels
from games.models import RuleConfiguration, SpecialHandSetting

_TRACKED = ("enabled", "water", "order")


# Their names in the history pages (the fields' verbose names carry a Chinese gloss).
_TRACKED_LABELS = {"enabled": _("enabled"), "water": _("water"), "order": _("rank")}


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
        out.append({"field": change.field, "label": label, "old": change.old, "new": change.new})
    return out


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
                        "old": va,
                        "new": vb,
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
            (str(_TRACKED_LABELS[field]), getattr(before, field), getattr(record, field))
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

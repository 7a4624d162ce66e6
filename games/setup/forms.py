"""The forms of the rule configuration admin: the plain fields checked by the rules engine
(``RuleConfig.from_dict``) and the special-hand rows checked with them as one configuration,
so an invalid change saves nothing."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.forms.models import BaseInlineFormSet
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from games import labels
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting
from games.rules.config import SPECIAL_BY_ID, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.setup.presets import (
    DECK_FIELDS,
)
from lobby.models import Room, RoomStatus

# Open rooms named in the error refusing a deck change (the rest are counted).
_ROOMS_NAMED = 10


# Engine field name (as ConfigError messages start) -> the form field it belongs to.
_ERROR_FIELDS = {name: name for name in PLAIN_FIELDS} | {
    f"row_bonus.{key}": field for field, key in ROW_BONUS_FIELDS.items()
}


def engine_error_field(message: str) -> str | None:
    head = message.split(" ", 1)[0]
    return _ERROR_FIELDS.get(head)


class RuleConfigurationForm(forms.ModelForm):
    """The plain fields; the engine validates them (the special hands: see the formset)."""

    class Meta:
        model = RuleConfiguration
        fields = "__all__"

    def _get_validation_exclusions(self) -> set[str]:
        # "One default" is kept by the save, which unsets the previous default first.
        return {*super()._get_validation_exclusions(), "is_default"}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if (
            self.instance.pk is not None
            and self.instance.is_default
            and not cleaned.get("is_default", True)
        ):
            self.add_error(
                "is_default",
                gettext(
                    "There must be a default configuration: make another one the default "
                    "instead (it replaces this one)."
                ),
            )
        if any(name in self.errors for name in (*PLAIN_FIELDS, *ROW_BONUS_FIELDS)):
            return cleaned
        data: dict[str, Any] = {name: cleaned[name] for name in PLAIN_FIELDS if name in cleaned}
        data["row_bonus"] = {
            key: cleaned[field] for field, key in ROW_BONUS_FIELDS.items() if field in cleaned
        }
        try:
            config = RuleConfig.from_dict(data)
        except ConfigError as exc:
            message = gettext("The rules engine rejects this: %(error)s") % {"error": exc}
            self.add_error(engine_error_field(exc.message), message)
            return cleaned
        self._check_open_rooms(config)
        return cleaned

    def _check_open_rooms(self, config: RuleConfig) -> None:
        """A deck change must leave a seat for every seat of the open rooms that play this
        configuration (RULES.md §12: ``max_seats``); otherwise it is refused, naming them."""
        changed = [name for name in DECK_FIELDS if name in self.changed_data]
        if self.instance.pk is None or not changed:
            return
        if transaction.get_connection().in_atomic_block:
            # The admin validates and saves in one transaction: hold the row until then, so
            # that two deck changes of one configuration are checked one after the other.
            RuleConfiguration.objects.select_for_update().filter(pk=self.instance.pk).exists()
        rooms = Room.objects.filter(
            rules_id=self.instance.pk, status=RoomStatus.OPEN, seats__gt=config.max_seats
        ).order_by("pk")
        count = rooms.count()
        if not count:
            return
        named = [
            gettext("“%(name)s” (#%(id)s, %(seats)s seats)")
            % {"name": room.name, "id": room.pk, "seats": room.seats}
            for room in rooms[:_ROOMS_NAMED]
        ]
        if count > len(named):
            named.append(gettext("and %(count)s more") % {"count": count - len(named)})
        self.add_error(
            changed[0],
            gettext(
                "This deck seats at most %(max)s players, but open rooms with this "
                "configuration have more seats: %(rooms)s. Keep the deck until they close, or "
                "give them another configuration."
            )
            % {"max": config.max_seats, "rooms": ", ".join(named)},
        )


class SpecialNameWidget(forms.Select):
    """The special hand's name (in the page's language) as text, not as a control."""

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        if SPECIAL_BY_ID.get(str(value)) is None:
            return format_html("{}", value or "")
        return format_html("<strong>{}</strong>", labels.special_name(str(value)))


class SpecialHandSettingForm(forms.ModelForm):
    class Meta:
        model = SpecialHandSetting
        fields = ("special", "enabled", "water", "order")
        widgets = {"special": SpecialNameWidget}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Disabled: the special of a row is never read from the request, only shown.
        self.fields["special"].disabled = True

    def has_changed(self) -> bool:
        # A new configuration's rows come pre-filled and are saved even when left as they are.
        return self.instance._state.adding or super().has_changed()


class SpecialHandFormSet(BaseInlineFormSet):
    """Validates the whole configuration: the parent's submitted values with these rows."""

    def get_unique_error_message(self, unique_check: Any) -> str:
        if "order" in unique_check:
            return gettext("Two special hands have the same rank: give each one its own rank.")
        return str(super().get_unique_error_message(unique_check))

    def rows(self) -> list[SpecialHandSetting]:
        """The rows as they would be saved (existing rows, and new rows that are saved)."""
        return [
            form.instance
            for form in self.forms
            if form.instance.pk is not None or form.has_changed()
        ]

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        rows = self.rows()
        if sorted(row.special for row in rows) != sorted(SPECIAL_IDS):
            raise ValidationError(
                gettext(
                    "A configuration has exactly one row for each of the %(count)d special hands."
                )
                % {"count": len(SPECIAL_IDS)}
            )
        ranks = Counter(row.order for row in rows)
        taken_twice = sorted(rank for rank, n in ranks.items() if n > 1)
        if taken_twice:
            raise ValidationError(
                gettext("Two special hands have rank %(rank)s: give each one its own rank.")
                % {"rank": taken_twice[0]}
            )
        try:
            RuleConfig.from_dict(self.instance.engine_dict(specials=rows))
        except ConfigError as exc:
            raise ValidationError(
                gettext("The rules engine rejects these rules: %(error)s") % {"error": exc}
            ) from None

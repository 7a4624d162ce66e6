"""The forms of the rule configuration admin: the plain fields checked by the rules engine
(``RuleConfig.from_dict``) and the special-hand rows checked with them as one configuration,
so an invalid change saves nothing."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import transaction
from django.forms.models import BaseInlineFormSet
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.economy import economy_settings
from games import labels
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting
from games.rules.config import MAX_WATER, SPECIAL_BY_ID, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.setup.checks import Check, configuration_money_checks, special_label
from games.setup.presets import (
    DECK_FIELDS,
)
from lobby.models import Room, RoomStatus

# The CSS class of a control whose value is refused or warned about (the change form's
# stylesheet highlights it and its row).
ERROR_CLASS = "config-error"
WARNING_CLASS = "config-warning"
# simple-history's history_change_reason is a CharField of this length.
CHANGE_REASON_MAX_LENGTH = 100


def mark_field(form: forms.BaseForm, name: str, css_class: str) -> None:
    """Highlight one control of ``form`` (its row is highlighted by the stylesheet)."""
    widget = form.fields[name].widget
    classes = widget.attrs.get("class", "")
    if css_class not in classes.split():
        widget.attrs["class"] = f"{classes} {css_class}".strip()
    if css_class == ERROR_CLASS:
        widget.attrs["aria-invalid"] = "true"


def open_rooms_use(configuration_id: int | None) -> bool:
    if configuration_id is None:
        return False
    return Room.objects.filter(rules_id=configuration_id, status=RoomStatus.OPEN).exists()


# Open rooms named in the error refusing a deck change (the rest are counted).
_ROOMS_NAMED = 10


# Engine field name (as ConfigError messages start) -> the form field it belongs to.
_ERROR_FIELDS = {name: name for name in PLAIN_FIELDS} | {
    f"row_bonus.{key}": field for field, key in ROW_BONUS_FIELDS.items()
}


def engine_error_field(message: str) -> str | None:
    head = message.split(" ", 1)[0]
    return _ERROR_FIELDS.get(head)


def engine_error_words(message: str) -> str:
    """An engine message in words: the engine's key (``row_bonus.back_quads``) becomes the
    field's name as the page shows it."""
    head, _, rest = message.partition(" ")
    field = _ERROR_FIELDS.get(head)
    if field is None:
        return message
    label = RuleConfiguration._meta.get_field(field).verbose_name
    return f"{label}: {rest}"


class RuleConfigurationForm(forms.ModelForm):
    """The plain fields; the engine validates them (the special hands: see the formset)."""

    change_reason = forms.CharField(
        label=_("reason for the change"),
        max_length=CHANGE_REASON_MAX_LENGTH,
        required=False,
        help_text=_(
            "Kept in the history. Required when open rooms play this configuration. Open "
            "tables keep the rules they were created with until they close."
        ),
    )
    confirm_warnings = forms.BooleanField(
        label=_("save despite the warnings"),
        required=False,
        help_text=_("The checks on money warn about these rules: tick this and save again."),
    )

    class Meta:
        model = RuleConfiguration
        fields = "__all__"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The special-hand formset checks the whole configuration and puts what it finds at
        # the fields of this form (the confirmation, the reason): it finds the form here.
        self.instance.config_form = self

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
            field = engine_error_field(exc.message)
            self.add_error(field, engine_error_words(exc.message))
            if field is not None:
                mark_field(self, field, ERROR_CLASS)
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
                "move them to another configuration first (Rooms: the action “Move to another "
                "configuration”)."
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
        # The columns' bounds, which the form fields copied, give way to clean_water and
        # clean_order's words (the model's own validators skip a field refused there).
        for name in ("water", "order"):
            field = self.fields[name]
            field.validators = [
                v
                for v in field.validators
                if not isinstance(v, MinValueValidator | MaxValueValidator)
            ]

    # Water and rank are refused here, in words naming the special and the limit ("Rank of
    # 六对半 (six pairs): between 1 and 15"), before the columns' own bounds (0 to 32767 …)
    # would say only a number; a field refused here is left out of the model's validation.
    def clean_water(self) -> int | None:
        water: int | None = self.cleaned_data.get("water")
        name = special_label(str(self.instance.special))
        if water is not None and water > MAX_WATER:
            raise forms.ValidationError(
                gettext("Water of %(name)s: at most %(max)s.") % {"name": name, "max": MAX_WATER}
            )
        if water is not None and water < 0:
            raise forms.ValidationError(gettext("Water of %(name)s: at least 0.") % {"name": name})
        return water

    def clean_order(self) -> int | None:
        order: int | None = self.cleaned_data.get("order")
        count = len(SPECIAL_IDS)
        if order is not None and not 1 <= order <= count:
            raise forms.ValidationError(
                gettext("Rank of %(name)s: between 1 and %(count)s.")
                % {"name": special_label(str(self.instance.special)), "count": count}
            )
        return order

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

    def _row_forms(self) -> dict[str, forms.BaseForm]:
        return {
            str(form.instance.special): form
            for form in self.forms
            if form.instance.pk is not None or form.has_changed()
        }

    def _check_rows(self) -> bool:
        """Each row's water and rank within their limits, refused at the field in words
        (the engine would name only its key). True if every row is within them."""
        count = len(SPECIAL_IDS)
        fine = True
        for special, form in self._row_forms().items():
            name = special_label(special)
            water = form.cleaned_data.get("water")
            if water is not None and water > MAX_WATER:
                form.add_error(
                    "water",
                    gettext("Water of %(name)s: at most %(max)s.")
                    % {"name": name, "max": MAX_WATER},
                )
                fine = False
            elif water is not None and water < 0:
                form.add_error("water", gettext("Water of %(name)s: at least 0.") % {"name": name})
                fine = False
            order = form.cleaned_data.get("order")
            if order is not None and not 1 <= order <= count:
                form.add_error(
                    "order",
                    gettext("Rank of %(name)s: between 1 and %(count)s.")
                    % {"name": name, "count": count},
                )
                fine = False
        for form in self.forms:
            for field in form.errors:
                if field in form.fields:
                    mark_field(form, field, ERROR_CLASS)
        return fine

    def _place(self, check: Check, css_class: str, parent: forms.BaseForm | None) -> bool:
        """Show ``check`` at its field (of a row or of the configuration); False if it has
        none there."""
        if check.field is None:
            return False
        if check.field.startswith("special:"):
            _prefix, special, name = check.field.split(":", 2)
            form = self._row_forms().get(special)
            if form is None:
                return False
            target = form
        else:
            if parent is None or check.field not in parent.fields:
                return False
            name = check.field
            target = parent
        if css_class == ERROR_CLASS:
            target.add_error(name, check.message)
        mark_field(target, name, css_class)
        return True

    def clean(self) -> None:
        super().clean()
        rows_fine = self._check_rows()
        if any(self.errors) or not rows_fine:
            raise ValidationError(gettext("Correct the special hands marked below."))
        parent: forms.BaseForm | None = getattr(self.instance, "config_form", None)
        if parent is not None and parent.is_bound and parent.errors:
            return  # the configuration's own fields are refused: nothing is saved, once said
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
            config = RuleConfig.from_dict(self.instance.engine_dict(specials=rows))
        except ConfigError as exc:
            raise ValidationError(
                gettext("The rules engine rejects these rules: %(error)s") % {"error": exc}
            ) from None
        grant = economy_settings().effective_signup_grant
        ranks = {str(row.special): row.order for row in rows}
        warnings, errors = configuration_money_checks(config, grant, ranks=ranks)
        if errors:
            for check in errors:
                self._place(check, ERROR_CLASS, parent)
            raise ValidationError([check.message for check in errors])
        if parent is None or not parent.is_bound:
            return
        reason = str(parent.cleaned_data.get("change_reason") or "").strip()
        changed = any(
            name not in ("change_reason", "confirm_warnings") for name in parent.changed_data
        ) or any(form.has_changed() for form in self.forms)
        if changed and not reason and open_rooms_use(self.instance.pk):
            message = gettext(
                "Open rooms play this configuration: say why it changes (the reason is kept in "
                "the history)."
            )
            parent.add_error("change_reason", message)
            mark_field(parent, "change_reason", ERROR_CLASS)
            raise ValidationError(gettext("Nothing was saved: give the reason for the change."))
        if warnings and not parent.cleaned_data.get("confirm_warnings"):
            for check in warnings:
                self._place(check, WARNING_CLASS, parent)
            mark_field(parent, "confirm_warnings", WARNING_CLASS)
            raise ValidationError(
                [
                    *(check.message for check in warnings),
                    gettext(
                        "Nothing was saved. To save these rules anyway, tick “save despite the "
                        "warnings” and save again."
                    ),
                ]
            )

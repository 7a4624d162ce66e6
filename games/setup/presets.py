"""The rule presets of RULES.md §12.6 in the admin, and the deck of a configuration in words.

"New from preset" (新建自预设) lists every preset of :mod:`games.rules.presets` and creates a
configuration from the engine's own preset data (``RuleConfiguration.from_engine``), which the
admin then edits like any other. The creation is one transaction, recorded by
django-simple-history like an edit: the configuration and each special-hand row get a "+"
record with the admin as user and the preset as change reason.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import IntegrityError, transaction
from django.utils.translation import gettext, ngettext

from games import labels
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.presets import PRESETS, Preset
from games.variants import variant_badge

DECK_FIELDS = ("extra_suits", "jokers", "spare_cards")
NAME_MAX_LENGTH = RuleConfiguration._meta.get_field("name").max_length or 80
# simple-history's change reason column holds 100 characters.
_REASON_MAX_LENGTH = 100


# -- the deck in words -------------------------------------------------------------------------


def deck_composition(config: RuleConfig) -> str:
    """``52 standard cards + 1 extra suit of diamonds + 2 jokers`` (RULES.md §12.1, §12.2)."""
    parts = [gettext("52 standard cards")]
    if config.extra_suits:
        parts.append(
            ngettext(
                "%(count)d extra suit of diamonds",
                "%(count)d extra suits of diamonds",
                config.extra_suits,
            )
            % {"count": config.extra_suits}
        )
    if config.jokers:
        parts.append(gettext("%(count)d jokers") % {"count": config.jokers})
    return " + ".join(parts)


def deck_summary(config: RuleConfig) -> str:
    """The deck a configuration plays, named as the lobby names it, with its cards, hand size
    and seats (RULES.md §12)."""
    if config.deck.is_classic:
        cards = gettext("%(count)s cards") % {"count": config.deck.size}
    else:
        cards = gettext("%(count)s cards (%(parts)s)") % {
            "count": config.deck.size,
            "parts": deck_composition(config),
        }
    values = {
        "name": variant_badge(config, labels.chinese()),
        "cards": cards,
        "hand": config.hand_size,
        "seats": config.max_seats,
    }
    if config.spare_cards:
        return (
            gettext(
                "Deck: %(name)s, %(cards)s; %(hand)s dealt to each player, who plays 13 of "
                "them; up to %(seats)s players."
            )
            % values
        )
    return (
        gettext(
            "Deck: %(name)s, %(cards)s; %(hand)s dealt to each player; up to %(seats)s players."
        )
        % values
    )


# -- presets -------------------------------------------------------------------------------


def _field_label(name: str) -> str:
    return str(RuleConfiguration._meta.get_field(name).verbose_name)


def _field_value(name: str, value: Any) -> str:
    field = RuleConfiguration._meta.get_field(name)
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    return str(value)


def _separators() -> tuple[str, str, str]:
    """Between the parts of a summary, between the items of a list, and around a remark."""
    return ("；", "、", "（%s）") if labels.chinese() else ("; ", ", ", " (%s)")


def _specials_summary(config: RuleConfig) -> str | None:
    """The special hands where they differ from the defaults (RULES.md §5), or None."""
    default = DEFAULT_CONFIG.specials
    if config.specials == default:
        return None
    parts_sep, items_sep, remark = _separators()
    enabled = config.enabled_specials
    if len(enabled) < len(DEFAULT_CONFIG.enabled_specials):
        names = items_sep.join(f"{labels.special_name(s.id)} {s.water}" for s in enabled)
        return gettext("only %(specials)s enabled, ranked in this order") % {"specials": names}
    was = {s.id: s for s in default}
    changed = []
    for s in config.specials:
        if (was[s.id].enabled, was[s.id].water) == (s.enabled, s.water):
            continue
        text = f"{labels.special_name(s.id)} {s.water}"
        if was[s.id].enabled != s.enabled:
            text += remark % (gettext("enabled") if s.enabled else gettext("disabled"))
        changed.append(text)
    parts = []
    if changed:
        parts.append(gettext("special hands: %(specials)s") % {"specials": items_sep.join(changed)})
    if [s.id for s in config.specials] != [s.id for s in default]:
        parts.append(gettext("special hands ranked in another order"))
    return parts_sep.join(parts)


def preset_summary(preset: Preset) -> str:
    """One line: the preset's deck and what it changes from RULES.md's defaults."""
    config = preset.config
    parts = [
        gettext("%(cards)s cards, %(hand)s each, up to %(seats)s players")
        % {"cards": config.deck.size, "hand": config.hand_size, "seats": config.max_seats}
    ]
    if config.five_of_a_kind:
        parts.append(gettext("five of a kind (五同)"))
    if config.spare_cards:
        parts.append(gettext("play 13 of 16"))
    data, default = config.to_dict(), DEFAULT_CONFIG.to_dict()
    for name in PLAIN_FIELDS:
        if name not in DECK_FIELDS and data[name] != default[name]:
            parts.append(f"{_field_label(name)}: {_field_value(name, data[name])}")
    for field, key in ROW_BONUS_FIELDS.items():
        if data["row_bonus"][key] != default["row_bonus"][key]:
            parts.append(f"{_field_label(field)} {data['row_bonus'][key]}")
    specials = _specials_summary(config)
    if specials is not None:
        parts.append(specials)
    if len(parts) == 1 and preset.config == DEFAULT_CONFIG:
        parts.append(gettext("every default of RULES.md"))
    return _separators()[0].join(parts)


def preset_name(preset: Preset) -> str:
    """The preset's names, ``多一色 Extra suit``."""
    return f"{preset.zh} {preset.en}"


def preset_default_name(preset: Preset) -> str:
    """The preset's names, with `` (2)``, `` (3)`` … when a configuration already has them."""
    base = preset_name(preset)
    taken = set(
        RuleConfiguration.objects.filter(name__startswith=base).values_list("name", flat=True)
    )
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} ({n})"
    return name


def preset_description(preset: Preset) -> str:
    return f"RULES.md §12.6 preset {preset.id} ({preset_name(preset)}) [{preset.source}]."


def preset_change_reason(preset: Preset) -> str:
    return f"from preset {preset.id} ({preset_name(preset)})"[:_REASON_MAX_LENGTH]


def name_taken_message(name: str) -> str:
    return gettext("A configuration named “%(name)s” already exists: choose another name.") % {
        "name": name
    }


class PresetForm(forms.Form):
    """The preset and the new configuration's name (unique)."""

    preset = forms.ChoiceField(choices=[(p.id, p.id) for p in PRESETS.values()])
    name = forms.CharField(max_length=NAME_MAX_LENGTH, strip=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["preset"].error_messages["invalid_choice"] = gettext(
            "There is no preset %(value)s."
        )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if RuleConfiguration.objects.filter(name=name).exists():
            raise forms.ValidationError(name_taken_message(name))
        return name


class NameTaken(Exception):
    """Another configuration took the name between the check and the creation."""


@transaction.atomic
def rule_configuration_from_preset(*, preset: Preset, name: str, user: Any) -> RuleConfiguration:
    """A new configuration equal to the engine's ``preset.config``, with its history.

    ``from_engine`` creates the configuration with ``objects.create`` (simple-history records
    its "+" version) and the special-hand rows with ``bulk_create``, which records nothing: the
    rows' "+" versions are written here. Both carry ``user`` and the preset as the reason.
    Raises :class:`NameTaken` (and creates nothing) when the name is taken."""
    reason = preset_change_reason(preset)
    try:
        with transaction.atomic():
            configuration = RuleConfiguration.from_engine(
                preset.config, name=name, description=preset_description(preset)
            )
    except IntegrityError:
        if RuleConfiguration.objects.filter(name=name).exists():
            raise NameTaken(name) from None
        raise
    history = RuleConfiguration.history.filter(id=configuration.pk, history_type="+")
    if not history.update(history_user=user, history_change_reason=reason):
        RuleConfiguration.history.bulk_history_create(
            [configuration], default_user=user, default_change_reason=reason
        )
    recorded = set(
        SpecialHandSetting.history.filter(configuration_id=configuration.pk).values_list(
            "id", flat=True
        )
    )
    rows = [row for row in configuration.special_hands.all() if row.pk not in recorded]
    SpecialHandSetting.history.bulk_history_create(
        rows, default_user=user, default_change_reason=reason
    )
    return configuration

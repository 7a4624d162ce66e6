"""Forms of the lobby page: they parse the input's types; the services check the values."""

from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext as _now
from django.utils.translation import gettext_lazy as _

from games.labels import data_name
from games.models import MATCH_MAX_DEALS, MATCH_TABLES, RuleConfiguration
from games.variants import VARIANTS, variant_name
from lobby.errors import UnknownVariant
from lobby.models import CODE_LENGTH, MAX_BASE_SCORE, NAME_MAX_LENGTH, SEAT_COUNTS, BotLevel
from lobby.selectors import rules_max_seats, variant_row

SEAT_CHOICES = [(n, str(n)) for n in SEAT_COUNTS]
DEFAULT_BASE_SCORE = 100


def _chinese() -> bool:
    return (get_language() or "").lower().startswith("zh")


def variant_choices() -> list[tuple[str, str]]:
    """Every variant, by its name in the active language (多一色 / Extra suit)."""
    return [(slug, variant_name(slug, _chinese())) for slug in VARIANTS]


def _filter_variant_choices() -> list[tuple[str, str]]:
    return [("", _now("any")), *variant_choices()]


def _quick_join_variant_choices() -> list[tuple[str, str]]:
    return [("", _now("the default rules")), *variant_choices()]


class VariantField(forms.ChoiceField):
    """An optional variant slug; an unknown one is refused with the lobby's own message."""

    def __init__(self, *, choices: Any, **kwargs: Any) -> None:
        super().__init__(choices=choices, required=False, **kwargs)

    def validate(self, value: Any) -> None:
        if value and value not in VARIANTS:
            raise forms.ValidationError(UnknownVariant().message, code="unknown_variant")


class RoomFilterForm(forms.Form):
    """The room list's filters (GET); an invalid value is ignored."""

    base_score = forms.IntegerField(
        label=_("Base score"), required=False, min_value=1, max_value=MAX_BASE_SCORE
    )
    seats = forms.TypedChoiceField(
        label=_("Seats"),
        choices=[("", _("any")), *SEAT_CHOICES],
        coerce=int,
        required=False,
        empty_value=None,
    )
    free = forms.BooleanField(label=_("With a free seat"), required=False)
    variant = VariantField(label=_("Variant"), choices=_filter_variant_choices)


BOT_CHOICES = [
    (0, _("No bots: wait for people")),
    (1, _("1 bot")),
    (2, _("2 bots")),
    (3, _("3 bots")),
    (4, _("4 bots")),
    (5, _("5 bots")),
]


class RulesSelect(forms.Select):
    """The rule configurations, each option with what the page's script needs to follow it:
    `data-max-seats` (its deck's seats), `data-variant` (its tags) and `data-name` (its name,
    which scripts such as the load test look configurations up by)."""

    def create_option(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option = super().create_option(*args, **kwargs)
        rules = getattr(option["value"], "instance", None)
        if isinstance(rules, RuleConfiguration):
            option["attrs"]["data-max-seats"] = rules_max_seats(rules=rules) or ""
            option["attrs"]["data-variant"] = " ".join(variant_row(rules=rules)["tags"])
            option["attrs"]["data-name"] = rules.name
        return option


class RulesChoiceField(forms.ModelChoiceField):
    """A configuration shown with its variant badge and its seats: "多一色 Extra suit ·
    多一色 · up to 5 seats"."""

    widget = RulesSelect

    def label_from_instance(self, obj: Any) -> str:
        name, badge = data_name(obj.name), variant_row(rules=obj)["label"]
        if badge == name:  # a preset's configuration, named after it: "福州 · up to 4 seats"
            return _now("%(name)s · up to %(max)s seats") % {
                "name": name,
                "max": rules_max_seats(rules=obj) or "?",
            }
        return _now("%(name)s · %(badge)s · up to %(max)s seats") % {
            "name": name,
            "badge": badge,
            "max": rules_max_seats(rules=obj) or "?",
        }


class _TableTermsForm(forms.Form):
    """The name, rules and base score of a room or of a duplicate match's tables."""

    name = forms.CharField(
        label=_("Name"),
        max_length=NAME_MAX_LENGTH,
        required=False,
        help_text=_("Optional: your name's table by default."),
    )
    rules = RulesChoiceField(
        label=_("Rules"),
        queryset=RuleConfiguration.objects.filter(is_draft=False).order_by("-is_default", "name"),
        required=False,
        empty_label=None,
    )
    base_score = forms.IntegerField(
        label=_("Base score"),
        initial=DEFAULT_BASE_SCORE,
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_BASE_SCORE}),
    )

    def clean_bot_level(self) -> str:
        return self.cleaned_data.get("bot_level") or BotLevel.STRONG

    def clean_name(self) -> str | None:
        """An empty name means the default name (the service makes it)."""
        name = self.cleaned_data.get("name")
        return name if name and name.strip() else None


class RoomCreateForm(_TableTermsForm):
    seats = forms.TypedChoiceField(label=_("Seats"), choices=SEAT_CHOICES, coerce=int, initial=4)
    private = forms.BooleanField(label=_("Private (joined with a code)"), required=False)
    series_rounds = forms.TypedChoiceField(
        label=_("Series (房卡)"),
        choices=[("", _("No: play on")), *((n, str(n)) for n in (4, 8, 16))],
        coerce=int,
        required=False,
        empty_value=None,
        help_text=_("A private room only: that many rounds, then a final scoreboard."),
    )
    spectators = forms.BooleanField(
        label=_("Spectators may watch"),
        required=False,
        initial=True,
        help_text=_("A public room only: they see what every player sees, hands once revealed."),
    )
    chat_text = forms.BooleanField(
        label=_("Free-text chat"),
        required=False,
        initial=True,
        help_text=_("Players may type short messages; quick phrases and reactions are always on."),
    )
    bots = forms.TypedChoiceField(
        label=_("Bots (computer players)"),
        choices=BOT_CHOICES,
        coerce=int,
        required=False,
        empty_value=0,
        initial=0,
        help_text=_("Bots take seats beside you, so you can play alone; they leave with you."),
    )
    bot_level = forms.ChoiceField(
        label=_("Bot level"),
        choices=BotLevel.choices,
        initial=BotLevel.STRONG,
        required=False,
        help_text=_(
            "How the bots play: easy and normal use simple rules of thumb, strong the "
            "engine's best arrangement, expert simulates the other hands before choosing."
        ),
    )


MATCH_SEAT_CHOICES = [(n, str(n)) for n in (2, 3, 4)]
MATCH_TABLE_CHOICES = [(n, str(n)) for n in MATCH_TABLES]
DEFAULT_MATCH_DEALS = 6


class MatchCreateForm(_TableTermsForm):
    """A duplicate match (games.live.duplicate): several tables play the same deals."""

    seats = forms.TypedChoiceField(
        label=_("Seats per table"), choices=MATCH_SEAT_CHOICES, coerce=int, initial=4
    )
    tables = forms.TypedChoiceField(
        label=_("Tables"), choices=MATCH_TABLE_CHOICES, coerce=int, initial=2
    )
    deals = forms.IntegerField(
        label=_("Deals"),
        initial=DEFAULT_MATCH_DEALS,
        widget=forms.NumberInput(attrs={"min": 1, "max": MATCH_MAX_DEALS}),
    )
    bots = forms.BooleanField(
        label=_("Fill the other seats with bots"),
        required=False,
        initial=True,
        help_text=_(
            "The other tables' bots are the field: they hold the same cards as you and your "
            "opponents."
        ),
    )
    bot_level = forms.ChoiceField(
        label=_("Bot level"), choices=BotLevel.choices, initial=BotLevel.STRONG, required=False
    )


class RoomJoinForm(forms.Form):
    room = forms.IntegerField(widget=forms.HiddenInput, required=False)
    code = forms.CharField(
        label=_("Code"),
        required=False,
        max_length=32,
        widget=forms.TextInput(
            attrs={"maxlength": CODE_LENGTH, "autocomplete": "off", "class": "code"}
        ),
    )


class QuickJoinForm(forms.Form):
    base_score = forms.IntegerField(
        label=_("Base score"),
        initial=DEFAULT_BASE_SCORE,
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_BASE_SCORE}),
    )
    seats = forms.TypedChoiceField(label=_("Seats"), choices=SEAT_CHOICES, coerce=int, initial=4)
    with_bots = forms.BooleanField(label=_("Play against bots"), required=False)
    bot_level = forms.ChoiceField(
        label=_("Bot level"), choices=BotLevel.choices, initial=BotLevel.STRONG, required=False
    )
    variant = VariantField(label=_("Variant"), choices=_quick_join_variant_choices)

    def clean_bot_level(self) -> str:
        return self.cleaned_data.get("bot_level") or BotLevel.STRONG


class RoomRefForm(forms.Form):
    room = forms.IntegerField(widget=forms.HiddenInput)

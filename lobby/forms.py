"""Forms of the lobby page: they parse the input's types; the services check the values."""

from django import forms
from django.utils.translation import gettext_lazy as _

from games.models import RuleConfiguration
from lobby.models import CODE_LENGTH, MAX_BASE_SCORE, NAME_MAX_LENGTH, SEAT_COUNTS

SEAT_CHOICES = [(n, str(n)) for n in SEAT_COUNTS]
DEFAULT_BASE_SCORE = 100


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


BOT_CHOICES = [
    (0, _("No bots: wait for people")),
    (1, _("1 bot")),
    (2, _("2 bots")),
    (3, _("3 bots")),
]


class RoomCreateForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=NAME_MAX_LENGTH,
        required=False,
        help_text=_("Optional: your name's table by default."),
    )
    rules = forms.ModelChoiceField(
        label=_("Rules"),
        queryset=RuleConfiguration.objects.order_by("-is_default", "name"),
        required=False,
        empty_label=None,
    )
    base_score = forms.IntegerField(
        label=_("Base score"),
        initial=DEFAULT_BASE_SCORE,
        widget=forms.NumberInput(attrs={"min": 1, "max": MAX_BASE_SCORE}),
    )
    seats = forms.TypedChoiceField(label=_("Seats"), choices=SEAT_CHOICES, coerce=int, initial=4)
    private = forms.BooleanField(label=_("Private (joined with a code)"), required=False)
    bots = forms.TypedChoiceField(
        label=_("Bots (computer players)"),
        choices=BOT_CHOICES,
        coerce=int,
        required=False,
        empty_value=0,
        initial=0,
        help_text=_("Bots take seats beside you, so you can play alone; they leave with you."),
    )

    def clean_name(self) -> str | None:
        """An empty name means the default name (the service makes it)."""
        name = self.cleaned_data.get("name")
        return name if name and name.strip() else None


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


class RoomRefForm(forms.Form):
    room = forms.IntegerField(widget=forms.HiddenInput)

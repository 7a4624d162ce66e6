"""Forms of the accounts app: they parse and validate input; the services do the work."""

import uuid
from typing import Any

from django import forms
from django.contrib.auth.forms import (
    AdminUserCreationForm,
    SetPasswordMixin,
    UserChangeForm,
    UserCreationForm,
)
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.utils.translation import gettext_lazy as _

from accounts.errors import SignupRefused
from accounts.ledger import MAX_AMOUNT
from accounts.models import User
from accounts.services import username_check, username_refusal


class SignUpForm(UserCreationForm):
    """Username, optional e-mail address, password twice (checked by the password validators).
    A name that looks like an existing one, or holds an invisible character, is refused."""

    email = forms.EmailField(
        label=_("Email address"),
        required=False,
        help_text=_("Optional."),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_username(self) -> str:
        username: str | None = super().clean_username()
        if not username:  # already refused: the same name in another case
            return username or ""
        refusal = username_refusal(username=username)
        if refusal is not None:
            raise forms.ValidationError(refusal.message, code=refusal.code)
        return username


class GuestSignUpForm(SetPasswordMixin, forms.Form):
    """A guest signing up (`accounts.services.guest_convert`): the guest's own name, kept or
    changed (refused as at sign-up when it looks like another account's), an optional
    e-mail address and the password twice (checked by the password validators)."""

    username = forms.CharField(
        label=_("Username"),
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text=_("Keep your guest name or choose another."),
    )
    email = forms.EmailField(label=_("Email address"), required=False, help_text=_("Optional."))
    password1, password2 = SetPasswordMixin.create_password_fields()

    def __init__(self, *args: Any, guest: User, **kwargs: Any) -> None:
        kwargs.setdefault("initial", {}).setdefault("username", guest.get_username())
        super().__init__(*args, **kwargs)
        self.guest = guest

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        refusal = username_refusal(username=username, user=self.guest)
        if refusal is not None:
            raise forms.ValidationError(refusal.message, code=refusal.code)
        return username

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        self.validate_passwords()
        self.validate_password_for_user(self.guest)
        return cleaned


def _name_checked(username: str, *, user: User | None = None) -> str:
    """`username`, unless it holds an invisible character or looks like another account's
    name (`accounts.services.username_check`, the sign-up's rule and message). The name's key
    stays locked until the admin's transaction ends, so two look-alike saves cannot both pass."""
    try:
        username_check(username=username, user=user, lock=True)
    except SignupRefused as refusal:
        raise forms.ValidationError(refusal.message, code=refusal.code) from None
    return username


class LookAlikeCheckedCreationForm(AdminUserCreationForm):
    """The admin's "Add user" form, refusing the names sign-up refuses."""

    def clean_username(self) -> str:
        username: str | None = super().clean_username()
        if not username:  # already refused: the same name in another case
            return username or ""
        return _name_checked(username)


class LookAlikeCheckedChangeForm(UserChangeForm):  # type: ignore[type-arg]
    """The admin's user form: a new name is refused as at sign-up, except that a look-alike
    of the account's own name is fine. An unchanged name is not checked again (accounts made
    before the rule keep their names)."""

    def clean_username(self) -> str:
        username: str = self.cleaned_data.get("username") or ""
        if username and "username" in self.changed_data:
            return _name_checked(username, user=self.instance)
        return username


class TableSettingsForm(forms.Form):
    """The player's table settings (profile page): how a new hand opens (RULES.md §6)."""

    SUGGESTED = "suggested"
    SORTED = "sorted"

    opening = forms.ChoiceField(
        label=_("A new hand opens"),
        choices=[
            (SUGGESTED, _("laid out in the rows as the best suggestion")),
            (SORTED, _("sorted by rank, the rows empty")),
        ],
        widget=forms.RadioSelect,
    )

    def default_layout(self) -> bool:
        return bool(self.cleaned_data["opening"] == self.SUGGESTED)


def _new_idempotency_key(prefix: str) -> str:
    return f"{prefix}:{uuid.uuid4()}"


class WalletAdjustmentForm(forms.Form):
    """Credit or debit a wallet. The hidden key makes a resubmitted form post only once."""

    CREDIT = "credit"
    DEBIT = "debit"

    direction = forms.ChoiceField(
        label=_("Direction"),
        choices=[(CREDIT, _("Credit (add coins)")), (DEBIT, _("Debit (remove coins)"))],
        widget=forms.RadioSelect,
    )
    amount = forms.IntegerField(label=_("Amount (coins)"), min_value=1, max_value=MAX_AMOUNT)
    reason = forms.CharField(
        label=_("Reason"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=1000,
        help_text=_("Required. Recorded with your name in the ledger; the player sees it."),
    )
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=200)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial.setdefault("idempotency_key", _new_idempotency_key("admin-adjust"))

    def signed_amount(self) -> int:
        amount: int = self.cleaned_data["amount"]
        return amount if self.cleaned_data["direction"] == self.CREDIT else -amount


class TransactionReversalForm(forms.Form):
    """Confirm the reversal of a transaction, saying why."""

    reason = forms.CharField(
        label=_("Reason"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=1000,
        help_text=_("Required. Recorded with your name in the ledger; the players see it."),
    )

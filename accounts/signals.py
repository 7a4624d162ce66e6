"""Signals of the accounts app, and what happens when a password changes.

`transaction_posted` is sent only after the database transaction has committed.
`staff_account_action` is sent inside the transaction of the change it reports.

A changed password deletes the user's API tokens (rest_framework.authtoken), in the same
transaction as the new password, whichever way it was changed: the password change page, the
admin's password form, `manage.py changepassword`, `set_password()` + `save()`, a hash assigned
directly, `set_unusable_password()`. Django's sessions already end on a password change (the
session hash); a token would otherwise keep working for whoever had learnt it. A hash *upgrade*
on log-in (a newer hasher or more iterations, same password) keeps the tokens: Django marks it
by saving only the password with no raw password pending (`check_password`'s setter).
Not covered: a queryset `update()` of the password column, which sends no signal.
"""

from typing import Any

from django.db.models.signals import post_save, pre_save
from django.dispatch import Signal

# Sent once per newly posted ledger transaction (never for a replayed idempotency key),
# with `transaction`: the accounts.models.Transaction. Receivers may push balance updates.
transaction_posted = Signal()

# Sent by the user admin when a staff member acts on another account: `user` (the account),
# `staff` (who acted) and `actions`, a list of "password", "email", "is_active" (changed) and
# "reset_link" (a password reset link sent). The games app marks the rounds the player is in
# (games.live.staff_marks); accounts knows nothing of rounds.
staff_account_action = Signal()

_REVOKE = "_api_tokens_to_revoke"


def _is_hash_upgrade(instance: Any, update_fields: Any) -> bool:
    return getattr(instance, "_password", None) is None and (
        update_fields is not None and set(update_fields) == {"password"}
    )


def user_password_compare(
    sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **kwargs: Any
) -> None:
    """pre_save of the user model: note whether this save changes the stored password."""
    setattr(instance, _REVOKE, False)
    if raw or instance._state.adding or instance.pk is None:
        return
    if update_fields is not None and "password" not in update_fields:
        return
    if "password" not in instance.__dict__:  # deferred: this save does not write it
        return
    stored = (
        sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
    )
    if stored is None or stored == instance.password:
        return
    if _is_hash_upgrade(instance, update_fields):
        return
    setattr(instance, _REVOKE, True)


def user_api_tokens_revoke(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    """post_save of the user model: a changed password deletes the user's API tokens."""
    if raw or not getattr(instance, _REVOKE, False):
        return
    setattr(instance, _REVOKE, False)
    from rest_framework.authtoken.models import Token

    Token.objects.filter(user_id=instance.pk).delete()


def password_change_receivers_connect(user_model: Any) -> None:
    pre_save.connect(
        user_password_compare, sender=user_model, dispatch_uid="accounts.user_password_compare"
    )
    post_save.connect(
        user_api_tokens_revoke, sender=user_model, dispatch_uid="accounts.user_api_tokens_revoke"
    )

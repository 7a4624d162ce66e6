"""Template context every page gets from the accounts app."""

from typing import Any

from django.http import HttpRequest

from accounts.selectors import wallet_balance


def wallet(request: HttpRequest) -> dict[str, Any]:
    """``header_balance``: the logged-in player's coins, shown in the site header (one query,
    made only when a template reads it)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"header_balance": lambda: wallet_balance(user=user)}

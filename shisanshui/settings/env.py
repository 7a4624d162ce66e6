"""Reading settings from environment variables.

Every value the deployment may change comes from the environment; these helpers keep the
parsing in one place and fail loudly, at start-up, when a required value is missing.
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    """The variable's value, or `default` when it is unset."""
    return os.environ.get(name, default)


def env_required(name: str) -> str:
    """The variable's value; raises ImproperlyConfigured when it is unset or empty."""
    value = os.environ.get(name, "")
    if not value:
        raise ImproperlyConfigured(f"The environment variable {name} must be set.")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    """True for 1/true/yes/on, False for 0/false/no/off or empty; anything else is an error."""
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"The environment variable {name} must be a boolean, not {value!r}.")


def env_int(name: str, default: int) -> int:
    """A whole number; `default` when the variable is unset; anything else is an error."""
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value.strip().replace("_", ""))
    except ValueError:
        raise ImproperlyConfigured(
            f"The environment variable {name} must be a whole number, not {value!r}."
        ) from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated list, blanks dropped; `default` (or []) when the variable is unset."""
    value = os.environ.get(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]

"""`manage.py bootstrap_demo`: what `make run` needs after `migrate` on a fresh machine.

Ensures the default rule configuration exists and that the demo superuser `admin` exists
with a known password, then prints the URL and the credentials. The password is
DEMO_ADMIN_PASSWORD when set; otherwise it is generated once and kept in
VAR_DIR/demo-admin.txt, so every run prints (and resets the user to) the same one.

It only ever touches the demo user it created itself, which it marks by putting it in the
group DEMO_MARKER_GROUP. A user named `admin` that it did not create (say a player who signed
up under that name) is left exactly as it is, and the command says so; so is a look-alike of
the name (``Admin``, ``аdmin`` with a Cyrillic а: `accounts.services.username_refusal`), and no
demo admin is made beside it. A demo admin made by an
earlier version (before the mark) is recognised by having the kept password, and marked.
"""

from __future__ import annotations

import importlib
import os
import secrets
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from accounts.services import username_refusal
from games.models import RuleConfiguration

USERNAME = "admin"
PASSWORD_FILE = "demo-admin.txt"
# Members are the demo users this command created (and so may reset); no permissions.
DEMO_MARKER_GROUP = "demo admin (made by bootstrap_demo)"


def demo_password(var_dir: Path) -> str:
    """DEMO_ADMIN_PASSWORD, else the one kept in var_dir (made on the first run)."""
    given = os.environ.get("DEMO_ADMIN_PASSWORD", "")
    if given:
        return given
    path = var_dir / PASSWORD_FILE
    if path.exists():
        kept = path.read_text(encoding="utf-8").strip()
        if kept:
            return kept
    password = secrets.token_urlsafe(12)
    var_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(password + "\n", encoding="utf-8")
    path.chmod(0o600)
    return password


def ensure_default_rule_configuration() -> RuleConfiguration:
    """The default configuration; created as the data migration does if there is none."""
    found = RuleConfiguration.objects.filter(is_default=True).first()
    if found is not None:
        return found
    migration = importlib.import_module("games.migrations.0002_default_rule_configuration")
    existing = RuleConfiguration.objects.filter(name=migration.DEFAULT_NAME).first()
    if existing is not None:
        from games.setup.services import rule_configuration_set_default

        return rule_configuration_set_default(configuration=existing)
    migration.create_default(apps, None)
    return RuleConfiguration.objects.get(is_default=True)


class Command(BaseCommand):
    help = (
        "Ensure the default rule configuration and the demo superuser 'admin' exist, "
        "and print the URL and the admin's credentials."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000/", help="URL to print")

    def handle(self, *args: Any, url: str, **options: Any) -> None:
        password = demo_password(Path(settings.VAR_DIR))
        with transaction.atomic():
            configuration = ensure_default_rule_configuration()
            user, created = demo_admin_ensure(password=password)
        admin_url = url.rstrip("/") + "/admin/"
        bar = "=" * 64
        if user is None:
            account = [
                f"  A user named '{USERNAME}' exists that bootstrap_demo did not create (or one",
                "  whose name looks like it): it was left unchanged (not made an administrator,",
                "  password not reset).",
                "  To get the demo admin, remove that user, or run `manage.py createsuperuser`.",
            ]
        else:
            account = [
                f"    username: {USERNAME}",
                f"    password: {password}",
                f"  ({'created' if created else 'reset'}; default rules: {configuration.name})",
            ]
        self.stdout.write(
            "\n".join(
                [
                    bar,
                    f"  十三水 Shisanshui is starting at {url}",
                    f"  Admin: {admin_url}",
                    *account,
                    "  Press Ctrl-C to stop everything.",
                    bar,
                ]
            )
        )


def demo_admin_ensure(*, password: str) -> tuple[Any, bool]:
    """(the demo admin with this password, whether it was created); (None, False) when a user
    named `admin`, or one whose name looks like it, exists that this command did not create
    (nothing is changed then)."""
    marker, _ = Group.objects.get_or_create(name=DEMO_MARKER_GROUP)
    user_model = get_user_model()
    user = user_model.objects.select_for_update().filter(username=USERNAME).first()
    created = user is None
    if user is None:
        if username_refusal(username=USERNAME) is not None:
            return None, False
        user = user_model(username=USERNAME)
    elif not user.groups.filter(pk=marker.pk).exists() and not user.check_password(password):
        return None, False
    user.is_staff = True
    user.is_superuser = True
    user.is_active = True
    if created or not user.check_password(password):
        # Only when it differs: a new hash would count as a password change (accounts.signals).
        user.set_password(password)
    user.save()
    user.groups.add(marker)
    return user, created

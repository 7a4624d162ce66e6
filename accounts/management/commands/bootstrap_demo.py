"""`manage.py bootstrap_demo`: what `make run` needs after `migrate` on a fresh machine.

Ensures the default rule configuration exists and that the demo superuser `admin` exists
with a known password, then prints the URL and the credentials. The password is
DEMO_ADMIN_PASSWORD when set; otherwise it is generated once and kept in
VAR_DIR/demo-admin.txt, so every run prints (and resets the user to) the same one.
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
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from games.models import RuleConfiguration

USERNAME = "admin"
PASSWORD_FILE = "demo-admin.txt"


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
        from games.services import rule_configuration_set_default

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
            user_model = get_user_model()
            user, created = user_model.objects.get_or_create(username=USERNAME)
            user.is_staff = True
            user.is_superuser = True
            user.is_active = True
            user.set_password(password)
            user.save()
        admin_url = url.rstrip("/") + "/admin/"
        bar = "=" * 64
        self.stdout.write(
            "\n".join(
                [
                    bar,
                    f"  十三水 Shisanshui is starting at {url}",
                    f"  Admin: {admin_url}",
                    f"    username: {USERNAME}",
                    f"    password: {password}",
                    f"  ({'created' if created else 'reset'}; default rules: {configuration.name})",
                    "  Press Ctrl-C to stop everything.",
                    bar,
                ]
            )
        )

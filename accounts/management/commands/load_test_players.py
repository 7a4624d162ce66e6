"""`manage.py load_test_players --prefix P --count N`: players for the load script, fast.

Signing up through the page hashes a password (PBKDF2, most of a second of CPU each): for the
hundreds of players of a load ramp that is minutes of setup. This creates the players
``P_0000`` … ``P_{N-1}`` that do not exist yet through the same service as the sign-up page
(``accounts.services.user_signup``: a wallet and the sign-up grant from the mint, posted to the
ledger) but with an unusable password, logs each one in (a database session) and prints one
JSON line per player: ``{"name": …, "cookie": {<session cookie name>: <key>}}``.

For load-test machines only: those players cannot log in through the page, and the command
refuses to run with DEBUG off unless ``--load-test-machine`` says this is one.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from accounts.services import user_signup

MAX_PLAYERS = 5000


class Command(BaseCommand):
    help = "Create (or reuse) load-test players with sessions, printed as JSON lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--prefix", required=True, help="names are <prefix>_0000 …")
        parser.add_argument("--count", type=int, required=True, help=f"1 to {MAX_PLAYERS}")
        parser.add_argument(
            "--load-test-machine",
            action="store_true",
            help="confirm this is a load-test machine (needed with DEBUG off)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        prefix, count = options["prefix"], options["count"]
        if not settings.DEBUG and not options["load_test_machine"]:
            raise CommandError("for load-test machines only: pass --load-test-machine")
        if not 1 <= count <= MAX_PLAYERS:
            raise CommandError(f"--count must be 1 to {MAX_PLAYERS}")
        if not prefix.isidentifier() or len(prefix) > 40:
            raise CommandError("--prefix must be letters, digits and _ (at most 40)")
        names = [f"{prefix}_{i:04d}" for i in range(count)]
        existing = {u.username: u for u in User.objects.filter(username__in=names)}
        for name in names:
            user = existing.get(name) or user_signup(username=name, password=None)
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            cookie = {settings.SESSION_COOKIE_NAME: str(session.session_key)}
            self.stdout.write(json.dumps({"name": name, "cookie": cookie}))

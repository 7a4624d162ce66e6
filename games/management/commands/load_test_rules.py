"""`manage.py load_test_rules`: the "Load test" rule configuration the load script plays.

No deal or reveal pacing (``deal_interval_ms`` and ``reveal_interval_ms`` 0) and short clocks,
so that a round lasts only as long as its players take; see docs/load-and-faults.md.

``--open-signups`` also lifts the economy's limit of sign-ups per address (the load script
signs every player up from 127.0.0.1): for a load-test machine only, never production.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from accounts.economy import economy_settings
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig

NAME = "Load test"
LOAD_TEST_RULES = {
    "ready_seconds": 120,  # seating many tables takes a while; nobody is kicked meanwhile
    "special_choice_seconds": 5,
    "arrange_seconds": 10,
    "deal_interval_ms": 0,
    "reveal_interval_ms": 0,
}


class Command(BaseCommand):
    help = (
        f'Create the "{NAME}" rule configuration (no pacing, short clocks) unless it exists, '
        "and print its id: rooms for `python -m benchmarks.load` are opened with it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default=NAME, help=f"Its name (default {NAME!r}).")
        parser.add_argument(
            "--open-signups",
            action="store_true",
            help="Also lift the limit of sign-ups per address (load-test machines only).",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        rules = RuleConfiguration.objects.filter(name=name).first()
        if rules is None:
            config = RuleConfig.from_dict(LOAD_TEST_RULES, base=DEFAULT_CONFIG)
            rules = RuleConfiguration.from_engine(config, name=name)
        if options["open_signups"]:
            settings = economy_settings()
            settings.signups_per_address_per_day = 0
            settings.save()
            self.stderr.write("Sign-ups per address: no limit (load-test machine only).")
        self.stdout.write(str(rules.pk))

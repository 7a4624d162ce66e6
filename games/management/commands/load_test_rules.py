"""`manage.py load_test_rules`: the "Load test" rule configuration the load script plays.

No deal or reveal pacing (``deal_interval_ms`` and ``reveal_interval_ms`` 0) and short clocks,
so that a round lasts only as long as its players take; see docs/load-and-faults.md.

``--open-signups`` also lifts the economy's limit of sign-ups per address (the load script
signs every player up from 127.0.0.1): for a load-test machine only, never production.

``--ready-seconds``, ``--special-choice-seconds`` and ``--arrange-seconds`` set those clocks
(the soak, benchmarks/soak.py, ensures ``--name Soak`` with 2 s clocks so that a timed-out seat
costs ~2 s): a new configuration gets them, an existing one is updated to them if it differs.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from accounts.economy import economy_settings
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.errors import RulesError

NAME = "Load test"
LOAD_TEST_RULES = {
    "ready_seconds": 120,  # seating many tables takes a while; nobody is kicked meanwhile
    "special_choice_seconds": 5,
    "arrange_seconds": 10,
    "deal_interval_ms": 0,
    "reveal_interval_ms": 0,
}
CLOCKS = ("ready_seconds", "special_choice_seconds", "arrange_seconds")


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
        for clock in CLOCKS:
            parser.add_argument(
                f"--{clock.replace('_', '-')}",
                type=int,
                dest=clock,
                help=f"Its {clock.replace('_', ' ')} (default {LOAD_TEST_RULES[clock]}).",
            )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        clocks = {c: options[c] for c in CLOCKS if options.get(c) is not None}
        rules = RuleConfiguration.objects.filter(name=name).first()
        try:
            if rules is None:
                config = RuleConfig.from_dict({**LOAD_TEST_RULES, **clocks}, base=DEFAULT_CONFIG)
                rules = RuleConfiguration.from_engine(config, name=name)
            elif any(getattr(rules, c) != v for c, v in clocks.items()):
                RuleConfig.from_dict({**rules.engine_dict(), **clocks})  # the engine validates
                for clock, value in clocks.items():
                    setattr(rules, clock, value)
                rules.save(update_fields=list(clocks))
                self.stderr.write(f"{name}: clocks set to {clocks}.")
        except RulesError as error:
            raise CommandError(f"Invalid clocks {clocks}: {error}") from None
        if options["open_signups"]:
            settings = economy_settings()
            settings.signups_per_address_per_day = 0
            settings.save()
            self.stderr.write("Sign-ups per address: no limit (load-test machine only).")
        self.stdout.write(str(rules.pk))

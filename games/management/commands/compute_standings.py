"""`manage.py compute_standings`: run the standings job now (``games.history.standings``), as the
beat
does every STANDINGS_SECONDS — it counts the rounds settled since its last run.

``--full`` forgets the standings and counts every settled round again: after restoring rounds
from a backup, or to check that the counted rows are what the whole history gives. It reads
the whole history once, in one transaction; the pages keep showing the old rows until it
commits.
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.history.standings import run_standings


class Command(BaseCommand):
    help = "Count the rounds settled since the last run into the standings (--full: all again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--full", action="store_true", help="forget the standings and count every round"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        run = run_standings(full=options["full"])
        self.stdout.write(
            f"{'full recount' if run.full else 'counted'}: {run.rounds} settled rounds, "
            f"{run.rows} standing rows written"
        )

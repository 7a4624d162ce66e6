"""`manage.py warm_special_stats`: simulate the deals behind the admin's special-hand table."""

import os
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from games.models import RuleConfiguration
from games.rules.errors import RulesError
from games.rules.stats import CLASSIC_SHAPE, DealShape
from games.setup.selectors import rule_configuration_special_stats
from games.setup.special_stats import special_deals_build


class Command(BaseCommand):
    help = (
        "Simulate SPECIAL_STATS_DEALS four-player deals (seed SPECIAL_STATS_SEED) and cache "
        "which special hands every hand makes in STATS_CACHE_DIR, so that the rule "
        "configuration admin never waits for it; then the same for the deck of every stored "
        "configuration with a variant deck (RULES.md §12), a full table of its seats. Does "
        "nothing for a deck whose cache is there."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--rebuild", action="store_true", help="Simulate again even if the cache exists."
        )
        parser.add_argument(
            "--classic-only",
            action="store_true",
            help="Only the classic 52-card deck, not the variant decks of stored configurations.",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=os.cpu_count() or 1,
            help="Processes that detect special hands (default: one per CPU).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if done == total or now - last[0] >= 5:
                last[0] = now
                self.stdout.write(f"  {done:,} / {total:,} deals")

        # Under the build lock: a web process building at the same time is waited for.
        deals = special_deals_build(
            rebuild=options["rebuild"], workers=max(1, options["workers"]), progress=progress
        )
        self.stdout.write(
            f"{deals.deals:,} deals ({deals.hands:,} hands, seed {deals.seed}) ready "
            f"in {time.monotonic() - started:.1f} s."
        )
        if not options["classic_only"]:
            self._variant_decks(options, progress)
        default = RuleConfiguration.objects.filter(is_default=True).first()
        if default is None:
            return
        stats = rule_configuration_special_stats(configuration=default)
        self.stdout.write(f"\nDefault configuration {default.name!r}:")
        self.stdout.write(
            f"{'rank':>4}  {'special':<28} {'water':>5} {'counted':>8} {'frequency':>11} "
            f"{'1 in':>12} {'water/deal':>10}"
        )
        for row in stats.rows:
            if not row.enabled:
                continue
            one_in = f"{row.one_in:,.0f}" if row.one_in else "-"
            self.stdout.write(
                f"{row.rank:>4}  {row.zh + ' ' + row.en:<28} {row.water:>5} {row.counted:>8,} "
                f"{row.frequency * 100:>10.4f}% {one_in:>12} {row.expected_water_per_deal:>10.4f}"
            )
        self.stdout.write(
            f"any special: {stats.special_frequency * 100:.3f}% of hands; special water per "
            f"deal: {stats.expected_water_per_deal:.4f}; entry minimum "
            f"{default.entry_minimum():,} coins"
        )

    def _variant_decks(self, options: dict[str, Any], progress: Any) -> None:
        """Build the simulation of each variant deck some stored configuration plays."""
        shapes: set[DealShape] = set()
        for configuration in RuleConfiguration.objects.all():
            try:
                shapes.add(DealShape.of(configuration.engine_config()))
            except RulesError:  # an invalid stored configuration has no table to show
                continue
        for shape in sorted(shapes - {CLASSIC_SHAPE}, key=repr):
            started = time.monotonic()
            deals = special_deals_build(
                rebuild=options["rebuild"],
                workers=max(1, options["workers"]),
                progress=progress,
                shape=shape,
            )
            self.stdout.write(
                f"{shape}: {deals.deals:,} deals ({deals.hands:,} hands) ready "
                f"in {time.monotonic() - started:.1f} s."
            )

"""The standings: each player's statistics over a period, counted by the beat job."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class StandingPeriod(models.TextChoices):
    WEEK = "week", _("this week")
    ALL = "all", _("all time")


class Standing(models.Model):
    """A player's statistics over a period, counted by the beat job
    ``games.live.tasks.compute_standings`` (``games.history.standings``), never on request: the
    rounds
    settled this week (since Monday 00:00 UTC) or ever, their water and coins, the guns fired
    and suffered, the home runs, the specials declared, the hands played automatically (a
    timeout or a disconnection) and the escapes. Bots have none."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="standings"
    )
    period = models.CharField(_("period"), max_length=8, choices=StandingPeriod.choices)
    rounds = models.PositiveIntegerField(_("rounds"), default=0)
    water = models.IntegerField(_("water"), default=0)
    coins = models.BigIntegerField(_("net coins"), default=0)
    guns = models.PositiveIntegerField(_("guns fired"), default=0)
    shot = models.PositiveIntegerField(_("guns suffered"), default=0)
    home_runs = models.PositiveIntegerField(_("home runs"), default=0)
    specials = models.PositiveIntegerField(_("specials declared"), default=0)
    auto = models.PositiveIntegerField(_("hands played automatically"), default=0)
    escapes = models.PositiveIntegerField(_("escapes"), default=0)
    computed_at = models.DateTimeField(_("computed at"))  # the run that last changed the row

    class Meta:
        verbose_name = _("standing")
        verbose_name_plural = _("standings")
        constraints = [
            models.UniqueConstraint(fields=["user", "period"], name="one_standing_per_period")
        ]
        indexes = [models.Index(fields=["period", "rounds"])]

    @property
    def water_per_round(self) -> float:
        return self.water / self.rounds if self.rounds else 0.0


class StandingsRun(models.Model):
    """One run of the standings job: when, how many newly settled rounds it counted, how many
    standing rows it wrote, and whether it recounted every round (``full``). The pages' "computed
    at" is the last run's time: a standing row changes only when its player has played since."""

    ran_at = models.DateTimeField(_("ran at"), db_index=True)
    rounds = models.PositiveIntegerField(_("rounds counted"), default=0)
    rows = models.PositiveIntegerField(_("rows written"), default=0)
    full = models.BooleanField(_("full recount"), default=False)

    class Meta:
        verbose_name = _("standings run")
        verbose_name_plural = _("standings runs")
        ordering = ["-ran_at"]

    def __str__(self) -> str:
        return f"{self.ran_at:%Y-%m-%d %H:%M:%S} {self.rounds} rounds"

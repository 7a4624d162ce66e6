"""The skill rating: one Glicko-2 rating per player and rule family (games.history.rating)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from games.rules.rating import START_DEVIATION, START_RATING, START_VOLATILITY


class PlayerRating(models.Model):
    """A player's skill rating in one rule family (``games.history.rating.rating_family``: the
    variant tags of games.variants, such as ``classic``, ``fuzhou`` or ``duoyise+laizi``), on
    the Glicko scale: ``rating`` ± ``deviation``, and the Glicko-2 ``volatility``; ``rounds``
    is how many settled rounds it was updated from. Written only by
    ``games.history.rating.rating_update``; bots have ratings too, never shown as people's."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    family = models.CharField(_("rule family"), max_length=32)
    rating = models.FloatField(_("rating"), default=START_RATING)
    deviation = models.FloatField(_("rating deviation"), default=START_DEVIATION)
    volatility = models.FloatField(_("volatility"), default=START_VOLATILITY)
    rounds = models.PositiveIntegerField(_("rounds"), default=0)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("player rating")
        verbose_name_plural = _("player ratings")
        constraints = [
            models.UniqueConstraint(fields=["user", "family"], name="one_rating_per_family"),
            models.CheckConstraint(
                condition=models.Q(deviation__gt=0, volatility__gt=0),
                name="games_rating_deviation_volatility_positive",
            ),
        ]
        indexes = [models.Index(fields=["family", "rounds"])]

    def __str__(self) -> str:
        return f"{self.user_id} {self.family} {self.rating:.0f} ± {self.deviation:.0f}"

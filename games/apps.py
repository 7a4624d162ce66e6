from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = _("Games")

    def ready(self) -> None:
        # The table's timers and the bots' tasks are scheduled by games.live.tasks, which listens
        # to the table services' signals.
        from games.live import duplicate, tasks

        tasks.connect()
        duplicate.connect()  # a duplicate match's tables move together

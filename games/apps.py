from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        # The table's timers and the bots' tasks are scheduled by games.tasks, which listens
        # to the table services' signals.
        from games import tasks

        tasks.connect()

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = _("Games")

    def ready(self) -> None:
        # The table's timers and the bots' tasks are scheduled by games.live.tasks, which listens
        # to the table services' signals.
        from accounts.economy import in_round_check_register
        from accounts.scan_now import collusion_scan_register
        from games.history.collusion import collusion_scan_flagged
        from games.history.selectors import player_in_unsettled_round
        from games.live import duplicate, staff_marks, tasks

        tasks.connect()
        duplicate.connect()  # a duplicate match's tables move together
        in_round_check_register(player_in_unsettled_round)  # no relief grant during a round
        collusion_scan_register(collusion_scan_flagged)  # the admin's "Scan now"
        staff_marks.connect()  # a staff action on a player's account marks the player's rounds

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = _("Lobby")

    def ready(self) -> None:
        from games.live.services import players_left, transition_committed
        from lobby.signals import free_seats_of_players_left, tell_lobby_of_rounds

        players_left.connect(free_seats_of_players_left, dispatch_uid="lobby.free_seats")
        transition_committed.connect(tell_lobby_of_rounds, dispatch_uid="lobby.rounds")

from django.apps import AppConfig


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = "Lobby"

    def ready(self) -> None:
        from games.table_services import players_left
        from lobby.signals import free_seats_of_players_left

        players_left.connect(free_seats_of_players_left, dispatch_uid="lobby.free_seats")

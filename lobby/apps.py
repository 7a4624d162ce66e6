from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LobbyConfig(AppConfig):
    name = "lobby"
    verbose_name = _("Lobby")

    def ready(self) -> None:
        from accounts.services import guest_departure_register
        from games.live.services import players_left, transition_committed
        from lobby.services import guest_seat_leave
        from lobby.signals import free_seats_of_players_left, tell_lobby_of_rounds
        from lobby.tasks import play_wait_close_schedule
        from lobby.waiting import play_wait_started

        guest_departure_register(guest_seat_leave)  # an idle guest removed leaves its seat
        players_left.connect(free_seats_of_players_left, dispatch_uid="lobby.free_seats")
        transition_committed.connect(tell_lobby_of_rounds, dispatch_uid="lobby.rounds")
        play_wait_started.connect(play_wait_close_schedule, dispatch_uid="lobby.play_wait")

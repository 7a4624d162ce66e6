"""Rooms in the admin: to look at, and to move to another rule configuration.

Rooms change through the lobby's services, which keep the seats consistent and tell the live
lobby; the fields are read-only here. A rules administrator may move open rooms with no round
in play to another configuration (``room_rules_move``), giving a reason: the move is kept in
the room's history (the admin's log: who, when, from which configuration to which, why).
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from games.models import RuleConfiguration
from lobby.errors import LobbyError
from lobby.models import Room, Seat
from lobby.services import room_rules_move
from shisanshui.ratelimit import rate_limit_hit

# Rooms moved by one action at most (each is locked and checked on its own).
MOVE_MAX_ROOMS = 50


class SeatInline(admin.TabularInline):
    model = Seat
    fields = ("position", "user", "joined_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MoveRulesForm(forms.Form):
    rules = forms.ModelChoiceField(
        label=_("move to the configuration"),
        queryset=RuleConfiguration.objects.filter(is_draft=False).order_by("name"),
    )
    reason = forms.CharField(label=_("reason"), max_length=200)


@admin.register(Room)
class RoomAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "name",
        "status",
        "rules",
        "base_score",
        "seats",
        "is_private",
        "entry_minimum",
        "owner",
        "created_at",
    )
    list_filter = ("status", "is_private", "seats", "rules")
    search_fields = ("name", "code", "owner__username")
    inlines = [SeatInline]
    actions = ["move_rules"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in Room._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_move_rules_permission(self, request: HttpRequest) -> bool:
        """Those who edit the rule configurations place rooms on them."""
        return request.user.has_perm("games.change_ruleconfiguration")

    @admin.action(
        description=_("Move to another configuration (rooms with no round in play)"),
        permissions=["move_rules"],
    )
    def move_rules(self, request: HttpRequest, queryset: QuerySet[Room]) -> HttpResponse | None:
        rooms = list(queryset.select_related("rules").order_by("pk")[: MOVE_MAX_ROOMS + 1])
        if len(rooms) > MOVE_MAX_ROOMS:
            self.message_user(
                request,
                gettext("Move at most %(count)s rooms at a time.") % {"count": MOVE_MAX_ROOMS},
                messages.ERROR,
            )
            return None
        form = MoveRulesForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            limited = rate_limit_hit("admin.room_move", request.user.pk)
            if limited is not None:
                self.message_user(
                    request,
                    gettext("Too many moves: try again in %(seconds)s s.")
                    % {"seconds": limited.retry_after},
                    messages.ERROR,
                )
                return None
            self._move(request, rooms, form.cleaned_data["rules"], form.cleaned_data["reason"])
            return None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": gettext("Move rooms to another configuration"),
            "rooms": rooms,
            "form": form,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/lobby/room/move_rules.html", context)

    def _move(
        self, request: HttpRequest, rooms: list[Room], rules: RuleConfiguration, reason: str
    ) -> None:
        for room in rooms:
            before = room.rules
            try:
                room_rules_move(room_id=room.pk, rules=rules)
            except LobbyError as exc:
                self.message_user(
                    request,
                    gettext("“%(room)s” was not moved: %(error)s")
                    % {"room": room.name, "error": exc.message},
                    messages.ERROR,
                )
                continue
            message = gettext("Moved from the configuration “%(old)s” to “%(new)s”: %(reason)s") % {
                "old": before.name,
                "new": rules.name,
                "reason": reason,
            }
            self.log_change(request, room, message)
            self.message_user(
                request,
                gettext(
                    "“%(room)s” now plays “%(rules)s”. A table it already has keeps the rules "
                    "it was created with until the room closes."
                )
                % {"room": room.name, "rules": rules.name},
                messages.SUCCESS,
            )

"""Rooms in the admin: to look at only. Rooms change through the lobby's services, which keep
the seats consistent and tell the live lobby; an edit here would do neither."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from lobby.models import Room, Seat


class SeatInline(admin.TabularInline):
    model = Seat
    fields = ("position", "user", "joined_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in Room._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

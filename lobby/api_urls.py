"""The lobby's API, under /api/lobby/."""

from django.urls import path

from lobby import apis

urlpatterns = [
    path("rooms/", apis.RoomListApi.as_view(), name="api-lobby-rooms"),
    path("rooms/join-by-code/", apis.RoomJoinByCodeApi.as_view(), name="api-lobby-join-by-code"),
    path("rooms/<int:room_id>/", apis.RoomDetailApi.as_view(), name="api-lobby-room"),
    path("rooms/<int:room_id>/join/", apis.RoomJoinApi.as_view(), name="api-lobby-join"),
    path("rooms/<int:room_id>/close/", apis.RoomCloseApi.as_view(), name="api-lobby-close"),
    path("quick-join/", apis.QuickJoinApi.as_view(), name="api-lobby-quick-join"),
    path("leave/", apis.LeaveApi.as_view(), name="api-lobby-leave"),
    path("me/", apis.MySeatApi.as_view(), name="api-lobby-me"),
]

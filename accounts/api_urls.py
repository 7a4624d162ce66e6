"""The accounts app's API, under /api/."""

from django.urls import path

from accounts import apis

urlpatterns = [
    path("auth/token/", apis.TokenApi.as_view(), name="api-token"),
    path("me/", apis.MeApi.as_view(), name="api-me"),
    path("wallet/", apis.WalletApi.as_view(), name="api-wallet"),
    path("wallet/entries/", apis.WalletEntriesApi.as_view(), name="api-wallet-entries"),
    path("wallet/daily-bonus/", apis.DailyBonusApi.as_view(), name="api-wallet-daily-bonus"),
    path("wallet/relief/", apis.ReliefApi.as_view(), name="api-wallet-relief"),
]

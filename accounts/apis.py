"""The HTTP API of the accounts app: who am I, my balance, my statement, and a token.

Browsers authenticate with their session, scripts with "Authorization: Token <key>" (a key from
POST /api/auth/token/). Read-only: coins move only through the game and the admin.
"""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.authtoken.views import ObtainAuthToken

from accounts.models import Entry, User
from accounts.selectors import wallet_entries, wallet_for_user


class MeSerializer(serializers.ModelSerializer):
    class Meta:
        model = User
        fields = ("id", "username", "email", "date_joined", "is_staff")
        read_only_fields = fields


class WalletSerializer(serializers.Serializer):
    account_id = serializers.IntegerField(
        allow_null=True, help_text="The wallet's ledger account; null before the first coin."
    )
    balance = serializers.IntegerField(help_text="Coins held, a whole number.")


class WalletEntrySerializer(serializers.ModelSerializer):
    transaction_id = serializers.IntegerField(source="transaction.pk")
    kind = serializers.CharField(source="transaction.kind")
    reference = serializers.CharField(source="transaction.reference")
    reason = serializers.CharField(source="transaction.reason")
    created_at = serializers.DateTimeField(source="transaction.created_at")

    class Meta:
        model = Entry
        fields = (
            "id",
            "transaction_id",
            "created_at",
            "kind",
            "reference",
            "reason",
            "amount",
            "balance_after",
        )
        read_only_fields = fields


@extend_schema(tags=["accounts"], summary="The current user")
class MeApi(generics.RetrieveAPIView):
    serializer_class = MeSerializer

    def get_object(self) -> Any:
        return self.request.user


@extend_schema(tags=["accounts"], summary="The current user's wallet balance")
class WalletApi(generics.RetrieveAPIView):
    serializer_class = WalletSerializer

    def get_object(self) -> dict[str, Any]:
        wallet = wallet_for_user(user=self.request.user)
        return {
            "account_id": wallet.pk if wallet else None,
            "balance": wallet.balance if wallet else 0,
        }


@extend_schema(tags=["accounts"], summary="The current user's ledger entries, newest first")
class WalletEntriesApi(generics.ListAPIView):
    serializer_class = WalletEntrySerializer

    def get_queryset(self) -> Any:
        return wallet_entries(user=self.request.user)


@extend_schema(tags=["accounts"], summary="Obtain an API token from a username and password")
class TokenApi(ObtainAuthToken):
    """POST username and password; answers {"token": key}, the same key on every call."""

    # The credentials are in the request; no session, hence no CSRF check for scripts.
    authentication_classes = ()

"""The HTTP API of the accounts app: who am I, my balance, my statement, a token, and the
grants a player claims (the daily bonus, relief).

Browsers authenticate with their session, scripts with "Authorization: Token <key>" (a key from
POST /api/auth/token/). Coins move only through the game, the admin and those two claims.
"""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from accounts.economy import ClaimStatus, daily_bonus_status, relief_status
from accounts.errors import ClaimRefused
from accounts.lockout import lockout_message, lockout_seconds_left
from accounts.models import Entry, Transaction, User
from accounts.selectors import wallet_balance, wallet_entries, wallet_for_user
from accounts.services import wallet_daily_bonus_claim, wallet_relief_claim
from shisanshui.api import api_error, too_many_requests


class MeSerializer(serializers.ModelSerializer):
    class Meta:
        model = User
        fields = ("id", "username", "email", "date_joined", "is_staff", "is_guest")
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


class ApiErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="locked_out or rate_limited.")
    message = serializers.CharField(help_text="For people, in the request's language.")
    retry_after = serializers.IntegerField(help_text="Seconds to wait (also in Retry-After).")


class ApiErrorSerializer(serializers.Serializer):
    error = ApiErrorBodySerializer()


@extend_schema(
    tags=["accounts"],
    summary="Obtain an API token from a username and password",
    responses={
        200: AuthTokenSerializer,
        400: OpenApiResponse(description="Wrong or missing username or password."),
        429: OpenApiResponse(
            ApiErrorSerializer,
            description=(
                "locked_out: too many failures for this username from this address; "
                "rate_limited: too many requests from this address."
            ),
        ),
    },
)
class TokenApi(ObtainAuthToken):
    """POST username and password; answers {"token": key}, the same key on every call (until
    the password changes, which deletes it: accounts.signals).

    Failures count towards the log-in lockout of the username + address (accounts.lockout),
    and the address is throttled (the "auth_token" rate); both answer 429 with Retry-After.
    """

    # The credentials are in the request; no session, hence no CSRF check for scripts.
    authentication_classes = ()
    throttle_classes = (ScopedRateThrottle,)
    throttle_scope = "auth_token"

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # django-axes flags the request when this failure locked the pair out, or when
            # it already was (then the password was not even checked).
            if getattr(request, "axes_locked_out", False):
                credentials = getattr(request, "axes_credentials", None)
                seconds = lockout_seconds_left(request, credentials)
                return too_many_requests(
                    code="locked_out", message=lockout_message(seconds), retry_after=seconds
                )
            raise ValidationError(serializer.errors)
        token, _created = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})


# The grants players claim: GET says whether one may be claimed now, POST claims it.


class ClaimStatusSerializer(serializers.Serializer):
    amount = serializers.IntegerField(help_text="Coins one claim credits (0: turned off).")
    claimable = serializers.BooleanField(help_text="Whether a POST would credit it now.")
    code = serializers.CharField(
        allow_null=True, help_text="Why it cannot be claimed now (as a refusal's code), or null."
    )
    message = serializers.CharField(allow_blank=True, help_text="The same, for people.")
    next_claim_at = serializers.DateTimeField(
        allow_null=True, help_text="When it can be claimed again, if that is only a matter of time."
    )


class ReliefStatusSerializer(ClaimStatusSerializer):
    below = serializers.IntegerField(help_text="Relief is for players holding fewer coins.")
    per_day = serializers.IntegerField(help_text="Reliefs allowed per UTC day.")
    claimed_today = serializers.IntegerField(help_text="Reliefs received today (UTC).")


class ClaimedSerializer(serializers.Serializer):
    transaction_id = serializers.IntegerField(help_text="The ledger transaction that paid it.")
    amount = serializers.IntegerField(help_text="Coins credited.")
    balance = serializers.IntegerField(help_text="The wallet's balance afterwards.")


class ClaimRefusalBodySerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text=(
            "already_claimed, daily_bonus_off, relief_off, not_broke, relief_limit, in_round "
            "or bot."
        )
    )
    message = serializers.CharField(help_text="For people, in the request's language.")


class ClaimRefusalSerializer(serializers.Serializer):
    error = ClaimRefusalBodySerializer()


class _ClaimApi(APIView):
    """GET: may the grant be claimed now; POST: claim it (201), or 409 with the reason.

    A POST is throttled per user by its scope's rate (REST_FRAMEWORK's DEFAULT_THROTTLE_RATES;
    the profile page's button spends the same budget) on top of the default throttles; the
    service makes a second claim impossible whatever the rate.
    """

    throttle_scope = ""

    def get_throttles(self) -> list[Any]:
        throttles = list(super().get_throttles())
        scoped = any(isinstance(t, ScopedRateThrottle) for t in throttles)
        if self.request.method == "POST" and not scoped:
            throttles.append(ScopedRateThrottle())
        return throttles

    def status_of(self, user: User) -> ClaimStatus:
        raise NotImplementedError

    def claim(self, user: User) -> Transaction:
        raise NotImplementedError

    def get(self, request: Request) -> Response:
        serializer = self.get_serializer_class()(self.status_of(request.user))
        return Response(serializer.data)

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return ClaimStatusSerializer

    def post(self, request: Request) -> Response:
        user = request.user
        try:
            posted = self.claim(user)
        except ClaimRefused as refusal:
            return Response(api_error(refusal.code, refusal.message), status=409)
        amount = posted.entries.get(account__user=user).amount
        data = {"transaction_id": posted.pk, "amount": amount, "balance": wallet_balance(user=user)}
        return Response(ClaimedSerializer(data).data, status=201)


_CLAIM_RESPONSES = {
    201: ClaimedSerializer,
    409: OpenApiResponse(ClaimRefusalSerializer, description="It may not be claimed now."),
    429: OpenApiResponse(ApiErrorSerializer, description="rate_limited: too many requests."),
}


@extend_schema(tags=["accounts"])
class DailyBonusApi(_ClaimApi):
    """The daily bonus: once per UTC day, the economy settings' amount."""

    throttle_scope = "wallet_daily_bonus"

    def status_of(self, user: User) -> ClaimStatus:
        return daily_bonus_status(user=user)

    def claim(self, user: User) -> Transaction:
        return wallet_daily_bonus_claim(user=user)

    @extend_schema(summary="Whether today's bonus may be claimed", responses=ClaimStatusSerializer)
    def get(self, request: Request) -> Response:
        return super().get(request)

    @extend_schema(summary="Claim today's bonus", request=None, responses=_CLAIM_RESPONSES)
    def post(self, request: Request) -> Response:
        return super().post(request)


@extend_schema(tags=["accounts"])
class ReliefApi(_ClaimApi):
    """Relief for broke players: below a balance, a few times per UTC day, never mid-round."""

    throttle_scope = "wallet_relief"

    def get_serializer_class(self) -> type[serializers.Serializer]:
        return ReliefStatusSerializer

    def status_of(self, user: User) -> ClaimStatus:
        return relief_status(user=user)

    def claim(self, user: User) -> Transaction:
        return wallet_relief_claim(user=user)

    @extend_schema(summary="Whether relief may be claimed now", responses=ReliefStatusSerializer)
    def get(self, request: Request) -> Response:
        return super().get(request)

    @extend_schema(summary="Claim a relief grant", request=None, responses=_CLAIM_RESPONSES)
    def post(self, request: Request) -> Response:
        return super().post(request)

"""Settlement audit: selectors over stored rounds, recomputation, replay (support and players).

:func:`round_verify` recomputes a settled round with the engine from what the round stores
(each player's dealt cards, arrangement or declared special, escape flag, and the rules
snapshot) and the players' balances before the settlement, then compares it, coin for coin,
with the stored result, the stored player rows and the ledger (the settlement, escape-penalty
and table-fee transactions referenced ``round:<pk>``; the fee at the stored result's
``fee_percent``). It also checks the revealed deck against the shuffle
commitment and that the deck deals the stored hands.

Nobody sees a hand before the settlement, staff included: every selector here reads rounds
through :func:`games.history.selectors.rounds_hidden_until_settled`, which blanks the cards,
arrangements, specials, deck and result of a round in play in the SQL itself; filters that
depend on how hands were played match settled rounds only; verifying a round in play computes
nothing, and its replay is refused (:class:`RoundInPlay`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import F, Q, QuerySet
from django.utils import timezone

from accounts.models import AccountKind, Entry, Transaction, TransactionKind
from accounts.models import User as UserModel
from games.history.selectors import (
    round_in_play,
    round_players_hidden_until_settled,
    rounds_hidden_until_settled,
)
from games.models import Round, RoundPlayer, RoundStaffAction, RuleConfiguration, TableEvent
from games.rules.api import result_json
from games.rules.cards import Card, format_cards, parse_cards
from games.rules.config import RuleConfig
from games.rules.errors import RulesError
from games.rules.scoring import Arranged, Declared, Seat, score_round
from games.table.chat import PHRASES, REACTIONS
from games.table.deck import deal_hands, deal_order, verify_commitment
from games.table.events import Event
from games.table.perspective import events_for
from games.table.state import parse_arranged

Json = dict[str, Any]

FLAG_ESCAPE = "escape"
FLAG_CUT = "cut"
FLAG_AUTO = "auto"
# A staff member changed a player's password, e-mail address or active flag, or sent a password
# reset link, while the round was in play (games.models.RoundStaffAction).
FLAG_STAFF = "staff"


# -- selectors: filtering rounds ---------------------------------------------------------------


def rounds_filter(
    *,
    rounds: QuerySet[Round] | None = None,
    player: str | None = None,
    room_id: int | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    amount_min: int | None = None,
    amount_max: int | None = None,
    flag: str | None = None,
) -> QuerySet[Round]:
    """Rounds narrowed by player (username), room, settlement date range (inclusive,
    local dates), amount (the largest coin movement of one player, |delta|) and a flag.

    Their hands are hidden until settlement (:func:`rounds_hidden_until_settled`). The amount
    and the flags say how the hands were played: they match settled rounds only — except the
    staff flag, which says nothing of the hands and matches a round in play too.
    """
    qs = rounds_hidden_until_settled(rounds=rounds)
    if player:
        qs = qs.filter(players__user__username=player)
    if room_id is not None:
        qs = qs.filter(table__room_id=room_id)
    if date_from is not None:
        qs = qs.filter(settled_at__gte=_day_start(date_from))
    if date_to is not None:
        qs = qs.filter(settled_at__lt=_day_start(date_to + timedelta(days=1)))
    if amount_min is not None or amount_max is not None or (flag and flag != FLAG_STAFF):
        qs = qs.filter(settled_at__isnull=False)
    if amount_min is not None:
        qs = qs.filter(Q(players__delta__gte=amount_min) | Q(players__delta__lte=-amount_min))
    if amount_max is not None:
        qs = qs.exclude(Q(players__delta__gt=amount_max) | Q(players__delta__lt=-amount_max))
    if flag == FLAG_ESCAPE:
        qs = qs.filter(players__escaped=True)
    elif flag == FLAG_AUTO:
        qs = qs.filter(players__auto__gt="")
    elif flag == FLAG_CUT:
        qs = qs.filter(result__isnull=False).exclude(result__cuts=[])
    elif flag == FLAG_STAFF:
        qs = qs.filter(staff_actions__isnull=False)
    return qs.distinct()


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def rounds_settled_between(*, date_from: date, date_to: date) -> QuerySet[Round]:
    return rounds_filter(date_from=date_from, date_to=date_to).order_by("settled_at", "pk")


def round_transactions(*, round_: Round) -> QuerySet[Transaction]:
    """Every ledger transaction that names this round (settlement, penalties, anything else)."""
    return Transaction.objects.filter(reference=f"round:{round_.pk}").order_by("pk")


def round_entries(*, round_: Round) -> QuerySet[Entry]:
    return (
        Entry.objects.filter(transaction__reference=f"round:{round_.pk}")
        .select_related("transaction", "account", "account__user")
        .order_by("transaction_id", "id")
    )


def player_rounds(*, user: UserModel, limit: int = 50) -> QuerySet[RoundPlayer]:
    """The player's rounds, the one in play (if any) first, then the settled ones newest
    first, with their room; the hand of a round in play reads as blank."""
    rows = RoundPlayer.objects.filter(user=user).select_related("round", "round__table__room")
    return round_players_hidden_until_settled(round_players=rows).order_by(
        F("round__settled_at").desc(nulls_first=True), "-round_id"
    )[:limit]


# -- the rules a round was played under ---------------------------------------------------------


@dataclass(frozen=True)
class RoundRules:
    """The configuration a round was played under: its id and name, the version (the
    configuration's history id; None when no version is recorded before the table opened:
    "unknown") and the base score of the round's own snapshot."""

    configuration_id: int
    name: str
    version: int | None
    base_score: int | None


def round_rules(*, round_: Round) -> RoundRules:
    """Which configuration and version ``round_`` played.

    A table reads its room's configuration once, when it is created
    (``games.live.store.table_for_room``), and a room's configuration never changes (the room
    admin is read-only), so the round's rules are its room's configuration as it stood when the
    table was created: the last history version recorded by then. The base score is the
    round's snapshot's (the room's own)."""
    room = round_.table.room
    version = (
        RuleConfiguration.history.filter(
            id=room.rules_id, history_date__lte=round_.table.created_at
        )
        .order_by("-history_date", "-history_id")
        .values_list("history_id", flat=True)
        .first()
    )
    base = (round_.config or {}).get("base_score")
    return RoundRules(
        configuration_id=room.rules_id,
        name=room.rules.name,
        version=version,
        base_score=int(base) if isinstance(base, int) else None,
    )


# -- verification ------------------------------------------------------------------------------


@dataclass
class PlayerCheck:
    user_id: int
    username: str
    position: int
    balance_before: int | None
    expected_delta: int | None
    expected_penalty: int | None
    stored_delta: int
    stored_penalty: int
    ledger_net: int


@dataclass
class VerifyReport:
    """What verifying one round found; ``ok`` when nothing is wrong. A round in play is not
    verified (``in_play``: nothing was computed, nothing of its hands read)."""

    round_id: int
    label: str
    players: list[PlayerCheck] = field(default_factory=list)
    commitment_ok: bool | None = None
    mismatches: list[str] = field(default_factory=list)
    in_play: bool = False

    @property
    def ok(self) -> bool:
        return not self.in_play and not self.mismatches


def _balances_before(round_: Round, rows: list[RoundPlayer]) -> tuple[dict[int, int], list[str]]:
    """Each player's wallet balance just before the settlement, and any inconsistency between
    the stored balances and what the ledger says.

    These balances decide the cannot-cover cuts (RULES.md §7.4). The round stores them at
    settlement (``Round.balances``, from the wallets the settlement holds locked); for a round
    without them they are derived from the ledger: the entry of the player's wallet in the
    settlement transaction (``balance_after - amount``), or else the wallet's last entry
    before that transaction. When both exist they are cross-checked."""
    problems: list[str] = []
    stored: dict[int, int] = {int(k): int(v) for k, v in (round_.balances or {}).items()}
    from_ledger: dict[int, int] = {}
    settlement = round_transactions(round_=round_).filter(kind=TransactionKind.SETTLEMENT).first()
    for row in rows:
        entries = Entry.objects.filter(
            account__user_id=row.user_id, account__kind=AccountKind.WALLET
        )
        if settlement is not None:
            own = entries.filter(transaction=settlement).first()
            if own is not None:
                from_ledger[row.user_id] = own.balance_after - own.amount
                continue
            before = entries.filter(transaction_id__lt=settlement.pk)
        else:
            before = entries.filter(transaction__created_at__lte=round_.settled_at)
        last = before.order_by("-transaction_id").first()
        from_ledger[row.user_id] = 0 if last is None else last.balance_after
    for user_id, balance in stored.items():
        if user_id in from_ledger and from_ledger[user_id] != balance:
            problems.append(
                f"player {user_id}: stored balance before settlement {balance}, "
                f"ledger says {from_ledger[user_id]}"
            )
    return ({**from_ledger, **stored} if stored else from_ledger), problems


def round_balances_before(*, round_: Round) -> dict[int, int]:
    """Each player's wallet balance just before the round's settlement (user id -> coins), as
    verifying the round reads it: the stored balances, else the ledger's."""
    rows = list(round_.players.all())
    return _balances_before(round_, rows)[0]


def round_seats(
    rows: Sequence[RoundPlayer], config: RuleConfig, balances: Mapping[int, int] | None = None
) -> list[Seat]:
    """The round's seats as the engine scores them, from its stored players (in their order;
    a balance only when ``balances`` has it)."""
    balances = balances or {}
    return [
        Seat(
            str(r.user_id),
            _hand(r, config),
            balances.get(r.user_id),
            r.escaped,
            _unused(r, config),
        )
        for r in rows
    ]


def _hand(row: RoundPlayer, config: RuleConfig) -> Arranged | Declared:
    if row.arrangement is None:
        aside = set(_unused(row, config))
        played = [c for c in parse_cards(row.cards.split(), deck=config.deck) if c not in aside]
        return Declared(row.special, parse_cards(format_cards(played), count=13, deck=config.deck))
    return parse_arranged(row.arrangement)


def _unused(row: RoundPlayer, config: RuleConfig) -> tuple[Card, ...]:
    """The spare cards a player set aside (RULES.md §12.4); () without spare cards."""
    if not row.unused:
        return ()
    return parse_cards(row.unused.split(), count=config.spare_cards, deck=config.deck)


def round_verify(*, round_: Round) -> VerifyReport:
    """Recompute ``round_`` with the engine and compare it with what was stored and posted.

    Every mismatch is one line in ``mismatches``; nothing is written. A round in play is
    answered ``in_play`` at once: its hands are nobody's to read before the settlement.
    """
    report = VerifyReport(round_id=round_.pk, label=str(round_))
    if round_.settled_at is None:
        report.in_play = True
        return report
    if round_.result is None:
        report.mismatches.append("round settled without a stored result")
        return report
    rows = list(round_.players.select_related("user").order_by("position"))

    # The shuffle: the revealed deck and salt match the commitment and deal the stored hands.
    try:
        config = RuleConfig.from_dict(round_.config)
    except RulesError as exc:
        report.mismatches.append(f"rules snapshot unreadable: {exc}")
        return report
    try:
        deck = parse_cards(round_.deck.split(), count=config.deck.size, deck=config.deck)
        report.commitment_ok = verify_commitment(deck, round_.salt, round_.commitment)
    except RulesError as exc:
        report.commitment_ok = False
        report.mismatches.append(f"revealed deck unreadable: {exc}")
        deck = None
    if report.commitment_ok is False and deck is not None:
        report.mismatches.append("revealed deck and salt do not match the commitment")
    start_seat = _start_seat(round_)
    if deck is not None and start_seat is not None:
        order = deal_order([r.position for r in rows], start_seat)
        hands = deal_hands(deck, order, config.hand_size)
        for row in rows:
            if row.cards != " ".join(format_cards(hands[row.position])):
                report.mismatches.append(f"position {row.position}: stored cards not dealt")

    balances, problems = _balances_before(round_, rows)
    report.mismatches.extend(problems)
    expected: Json | None = None
    try:
        expected = result_json(score_round(round_seats(rows, config, balances), config))
    except (RulesError, KeyError, TypeError, ValueError) as exc:
        report.mismatches.append(f"cannot recompute: {exc}")

    recomputed = {int(p["id"]): p for p in (expected or {}).get("players", [])}
    stored_result = {int(p["id"]): p for p in round_.result.get("players", [])}
    ledger = _ledger_net(round_)
    fee_percent = int(round_.result.get("fee_percent", 0))
    for row in rows:
        want = recomputed.get(row.user_id)
        check = PlayerCheck(
            user_id=row.user_id,
            username=row.user.username,
            position=row.position,
            balance_before=balances.get(row.user_id),
            expected_delta=None if want is None else want["delta"],
            expected_penalty=None if want is None else want["penalty"],
            stored_delta=row.delta,
            stored_penalty=row.penalty,
            ledger_net=ledger.pop(row.user_id, 0),
        )
        report.players.append(check)
        name = f"{row.user.username} (position {row.position})"
        if want is not None:
            for key in ("delta", "penalty", "water"):
                if getattr(row, key) != want[key]:
                    report.mismatches.append(
                        f"{name}: stored {key} {getattr(row, key)}, recomputed {want[key]}"
                    )
            kept = stored_result.get(row.user_id)
            if kept is None:
                report.mismatches.append(f"{name}: missing from the stored result")
            else:
                for key in ("delta", "penalty", "water"):
                    if kept.get(key) != want[key]:
                        report.mismatches.append(
                            f"{name}: result {key} {kept.get(key)}, recomputed {want[key]}"
                        )
            fee = table_fee(want["delta"], percent=fee_percent)
            if kept is not None and int(kept.get("fee", 0)) != fee:
                report.mismatches.append(
                    f"{name}: result fee {kept.get('fee', 0)}, recomputed {fee}"
                )
            if check.ledger_net != want["delta"] - fee:
                report.mismatches.append(
                    f"{name}: ledger moved {check.ledger_net:+d} coins, "
                    f"recomputed {want['delta'] - fee:+d}"
                    + (f" (winnings {want['delta']:+d}, table fee {fee})" if fee else "")
                )
    for user_id, amount in ledger.items():
        report.mismatches.append(f"ledger: wallet of user {user_id} moved {amount:+d} coins")
    if expected is not None:
        for key in ("pairs", "transfers", "cuts", "home_run"):
            if round_.result.get(key) != expected[key]:
                report.mismatches.append(f"result {key} differ from the recomputation")
    return report


def table_fee(delta: int, *, percent: int) -> int:
    """The table fee a player's ``delta`` pays at ``percent``: that share of winnings, rounded
    down; nothing on a loss (what ``games.live.settle.table_fees`` posts)."""
    return delta * percent // 100 if delta > 0 and percent > 0 else 0


def round_fee(result: Json | None, user_id: int) -> int:
    """The table fee the player paid in a round, from its stored result (0 when none)."""
    for p in (result or {}).get("players", []):
        if int(p["id"]) == user_id:
            return int(p.get("fee", 0))
    return 0


def _ledger_net(round_: Round) -> dict[int, int]:
    """Net coins moved per player wallet by the round's transactions (settlement, penalty,
    table fee)."""
    net: dict[int, int] = {}
    for entry in round_entries(round_=round_).filter(account__kind=AccountKind.WALLET):
        assert entry.account.user_id is not None
        net[entry.account.user_id] = net.get(entry.account.user_id, 0) + entry.amount
    return net


def _start_seat(round_: Round) -> int | None:
    deal = round_events(round_=round_).filter(type="deal").first()
    return None if deal is None else deal.payload.get("start_seat")


def rounds_verify(*, date_from: date, date_to: date) -> list[VerifyReport]:
    """Verify every round settled from ``date_from`` to ``date_to`` (inclusive)."""
    rounds = rounds_settled_between(date_from=date_from, date_to=date_to)
    return [round_verify(round_=r) for r in rounds.select_related("table")]


# -- replay ------------------------------------------------------------------------------------


class RoundInPlay(Exception):
    """The round is not settled: nothing of its play is shown to anyone outside the table."""


def round_events(*, round_: Round) -> QuerySet[TableEvent]:
    """The stored events of the round: from its ``round_start`` to its ``settled`` event.

    None for a round in play: its private events (hands, drafts, arrangements) are seen only
    at the table, by their player, until the settlement.
    """
    events = TableEvent.objects.filter(table_id=round_.table_id)
    if round_in_play(round_):
        return events.none()
    start = (
        events.filter(type="round_start", payload__round_no=round_.number)
        .values_list("version", flat=True)
        .first()
    )
    end = (
        events.filter(type="settled", payload__round_no=round_.number)
        .values_list("version", flat=True)
        .first()
    )
    if start is None:
        return events.none()
    events = events.filter(version__gte=start)
    if end is not None:
        events = events.filter(version__lte=end)
    return events.order_by("version")


def round_chat(*, round_: Round) -> list[dict[str, Any]]:
    """The round's table chat (``games.table.chat``), for support: each message's version, its
    player (by the round's seat; ``?`` for a seat not in the round), kind and text (a phrase
    in both languages, a reaction as its symbol). Empty for a round in play."""
    names = {p.position: p.user for p in round_.players.select_related("user")}
    lines = []
    for row in round_events(round_=round_).filter(type="chat"):
        payload = row.payload
        kind, value = payload.get("kind"), payload.get("value")
        if kind == "phrase" and value in PHRASES:
            zh, en = PHRASES[value]
            text = f"{zh} / {en}"
        elif kind == "reaction":
            text = REACTIONS.get(value, str(value))
        else:
            text = str(value)
        user = names.get(payload.get("position"))
        lines.append(
            {
                "version": row.version,
                "position": payload.get("position"),
                "player": "?" if user is None else f"{user.get_username()} (#{user.pk})",
                "kind": kind,
                "text": text,
            }
        )
    return lines


def round_replay(*, round_: Round, player: str | None, everything: bool = False) -> list[Event]:
    """The round's events as ``player`` saw them (``everything``: staff, every player's private
    events too, for a settled round only). Raises :class:`RoundInPlay` for a round in play."""
    if round_in_play(round_):
        raise RoundInPlay(round_.pk)
    events = [row.as_event() for row in round_events(round_=round_)]
    if everything and round_.settled_at is not None:
        return events
    return events_for(events, player)


def round_replay_position(*, round_: Round, user: Any) -> int | None:
    """The seat ``user`` played in the round, or None when they did not play it."""
    return (
        RoundPlayer.objects.filter(round=round_, user_id=user.pk)
        .values_list("position", flat=True)
        .first()
    )


def round_staff_actions(*, round_: Round) -> QuerySet[RoundStaffAction]:
    """What staff did to the players' accounts while the round was in play, oldest first."""
    return round_.staff_actions.select_related("player", "staff").order_by("at", "pk")


def rounds_with_flags(rounds: Iterable[Round]) -> list[tuple[Round, list[str]]]:
    """Each round with its flags (escape / cut / auto / staff), for lists and exports."""
    out = []
    for r in rounds:
        flags = []
        if round_in_play(r):
            out.append((r, [FLAG_STAFF] if r.staff_actions.exists() else []))
            continue
        players = list(r.players.all())
        if any(p.escaped for p in players):
            flags.append(FLAG_ESCAPE)
        if r.result and r.result.get("cuts"):
            flags.append(FLAG_CUT)
        if any(p.auto for p in players):
            flags.append(FLAG_AUTO)
        if r.staff_actions.exists():
            flags.append(FLAG_STAFF)
        out.append((r, flags))
    return out

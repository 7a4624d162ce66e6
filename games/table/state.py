"""The state of one table: frozen values, and their JSON form for storage.

A :class:`TableState` is everything the machine needs and nothing else; the service stores
:meth:`TableState.to_dict` (JSON) in the table's row and rebuilds it with
:meth:`TableState.from_dict`, which round-trips exactly. Secrets live here too — every seat's
cards, the deck and its salt — so a state is never sent to a client as is: clients get
:func:`games.table.perspective.snapshot_for`.

Times are epoch seconds (floats) supplied by the caller; positions are 0 .. capacity − 1, and
going round the table in increasing position is counter-clockwise (RULES.md §8).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from games.rules.cards import ANY_DECK, CARD_BY_TEXT, Card, format_cards, parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.scoring import Arranged

Json = dict[str, Any]


class Phase(StrEnum):
    """RULES.md §8: waiting → dealing → special_choice → arranging → comparing → settled."""

    WAITING = "waiting"
    DEALING = "dealing"
    SPECIAL_CHOICE = "special_choice"
    ARRANGING = "arranging"
    COMPARING = "comparing"
    SETTLED = "settled"


# Between rounds: players sit, press Ready and leave freely.
LOBBY_PHASES = frozenset({Phase.WAITING, Phase.SETTLED})
# A round is being played: the seats in it stay until settlement.
ROUND_PHASES = frozenset({Phase.DEALING, Phase.SPECIAL_CHOICE, Phase.ARRANGING, Phase.COMPARING})
# Cards are in hand and not yet revealed: players choose, arrange, save drafts, are hosted.
PLAY_PHASES = frozenset({Phase.SPECIAL_CHOICE, Phase.ARRANGING})

AUTO_REASONS = ("timeout", "hosted", "escaped")


@dataclass(frozen=True, slots=True)
class SeatState:
    """One seated player. Round fields (``hand`` …) are reset when a round starts.

    ``special`` is the enabled special the hand makes (RULES.md §5); ``special_choice`` is the
    player's answer (None: not asked or not answered yet). ``auto`` is why the hand was played
    for the player (``timeout``, ``hosted``, ``escaped``), None when the player played it.
    ``left``: pressed Leave during a round (an escape); the seat is removed at settlement.
    ``disconnected_at``: when the player's connection dropped (None while connected); a hosted
    hand's grace is counted from it (RULES.md §9).
    ``since``: the table version of the player's ``seated`` event. A connection of this player
    is never given anything logged before it (a previous occupant's events, or this player's
    own from an earlier stay at the table).
    ``bot``: a house player (a bot), which never plays without a person at the table
    (:func:`games.table.flow.house_leaves_alone`) and presses Ready at a Ready deadline.
    ``special_unused``: with spare cards (RULES.md §12.4), the 3 cards the special sets aside
    when declared (the special is made by the other 13); None otherwise.
    """

    player: str
    position: int
    ready: bool = False
    ready_deadline: float | None = None
    connected: bool = True
    in_round: bool = False
    hosted: bool = False
    escaped: bool = False
    left: bool = False
    hand: tuple[Card, ...] | None = None
    special: str | None = None
    special_choice: bool | None = None
    arrangement: Arranged | None = None
    auto: str | None = None
    draft: Json | None = None
    since: int = 0
    bot: bool = False
    special_unused: tuple[Card, ...] | None = None
    disconnected_at: float | None = None

    @property
    def declared(self) -> bool:
        """Plays its special hand (RULES.md §5.1 Yes)."""
        return self.special_choice is True

    @property
    def choosing(self) -> bool:
        """Holds a special and has not answered yet."""
        return self.in_round and self.special is not None and self.special_choice is None

    @property
    def done(self) -> bool:
        """Has nothing left to do this round: arranged or declared."""
        return self.arrangement is not None or self.declared

    @property
    def committed(self) -> bool:
        """The hand was in while the player was at the table — submitted, a special declared,
        or arranged at the arrange deadline while connected — so leaving or disconnecting now
        changes nothing in the round and is not an escape (RULES.md §7.5)."""
        return self.done and self.auto in (None, "timeout")

    @property
    def played_cards(self) -> tuple[Card, ...] | None:
        """The 13 cards the hand is played with: all of them, or with spare cards those not
        set aside (by the arrangement, or by the declared special). None while not done."""
        if self.hand is None:
            return None
        if self.arrangement is not None:
            return self.arrangement.cards
        if self.declared:
            aside = self.special_unused or ()
            return tuple(c for c in self.hand if c not in aside)
        return None

    @property
    def unused(self) -> tuple[Card, ...]:
        """The cards set aside (RULES.md §12.4; none without spare cards or while not done)."""
        played = self.played_cards
        if self.hand is None or played is None:
            return ()
        return tuple(c for c in self.hand if c not in played)

    def to_dict(self) -> Json:
        return {
            "player": self.player,
            "position": self.position,
            "ready": self.ready,
            "ready_deadline": self.ready_deadline,
            "connected": self.connected,
            "in_round": self.in_round,
            "hosted": self.hosted,
            "escaped": self.escaped,
            "left": self.left,
            "hand": None if self.hand is None else format_cards(self.hand),
            "special": self.special,
            "special_choice": self.special_choice,
            "arrangement": None if self.arrangement is None else arranged_json(self.arrangement),
            "auto": self.auto,
            "draft": self.draft,
            "since": self.since,
            "bot": self.bot,
            "special_unused": (
                None if self.special_unused is None else format_cards(self.special_unused)
            ),
            "disconnected_at": self.disconnected_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeatState:
        hand = data["hand"]
        arrangement = data["arrangement"]
        aside = data.get("special_unused")
        return cls(
            player=str(data["player"]),
            position=int(data["position"]),
            ready=bool(data["ready"]),
            ready_deadline=_float(data["ready_deadline"]),
            connected=bool(data["connected"]),
            in_round=bool(data["in_round"]),
            hosted=bool(data["hosted"]),
            escaped=bool(data["escaped"]),
            left=bool(data["left"]),
            hand=None if hand is None else _stored_cards(hand, _hand_size(hand), "hand"),
            special=data["special"],
            special_choice=data["special_choice"],
            arrangement=None if arrangement is None else parse_arranged(arrangement),
            auto=data["auto"],
            draft=data["draft"],
            since=int(data.get("since", 0)),
            bot=bool(data.get("bot", False)),
            special_unused=None if aside is None else _stored_cards(aside, 3, "special_unused"),
            disconnected_at=_float(data.get("disconnected_at")),
        )


@dataclass(frozen=True, slots=True)
class TableState:
    """One table. ``version`` is the version of the last event (0 before any).

    ``deadline`` is when the next timeout is due (None: nothing is timed); in the special
    choice phase it is the choice deadline, and ``arrange_deadline`` — set when the cards are
    down, for everyone — is when arranging ends. While arranging, ``deadline`` is earlier when
    a hosted hand's grace ends first (RULES.md §9); the players' clocks show
    :attr:`phase_deadline`. ``deck``, ``salt`` and every hand are secret
    until settlement; ``commitment`` (SHA-256 of deck text and salt) is public from the deal.
    ``config`` is the rule configuration the next or current round is played under.
    """

    capacity: int
    config: RuleConfig = DEFAULT_CONFIG
    version: int = 0
    phase: Phase = Phase.WAITING
    round_no: int = 0
    seats: tuple[SeatState, ...] = ()
    deadline: float | None = None
    phase_started_at: float | None = None
    arrange_deadline: float | None = None
    start_seat: int | None = None
    commitment: str | None = None
    salt: str | None = None
    deck: tuple[Card, ...] | None = field(default=None, repr=False)
    result: Json | None = None
    # A table of a duplicate match moves in lockstep with the match's other tables: its
    # rounds start only when the match starts them (every table full and ready) and its
    # comparison waits (``held``) until every table's hands are in. A match's table, and a
    # series' (房卡), plays ``last_round`` rounds at most.
    lockstep: bool = False
    last_round: int | None = None
    held: bool = False
    # Free-text chat allowed at this table (the room's setting; phrases and reactions always).
    chat_text: bool = True

    def seat(self, position: int) -> SeatState | None:
        for seat in self.seats:
            if seat.position == position:
                return seat
        return None

    def seat_of(self, player: str) -> SeatState | None:
        for seat in self.seats:
            if seat.player == player:
                return seat
        return None

    @property
    def table_opponents(self) -> int:
        """The opponents the table could hold (RULES.md §6): "best" and the suggestions are
        valued against them, whoever sits there now."""
        return max(1, self.capacity - 1)

    @property
    def round_seats(self) -> tuple[SeatState, ...]:
        """The seats playing the current round, in position order."""
        return tuple(s for s in self.seats if s.in_round)

    @property
    def awaiting_deal(self) -> bool:
        """The round has started and waits for the service to supply a shuffled deck."""
        return self.phase is Phase.DEALING and self.deck is None

    @property
    def match_over(self) -> bool:
        """A duplicate match's or a series' table has played all its rounds."""
        return self.last_round is not None and self.round_no >= self.last_round

    @property
    def match_ready(self) -> bool:
        """A lockstep table waits for the match to start its next deal: between rounds, every
        seat taken and ready, deals left."""
        return (
            self.lockstep
            and self.phase in LOBBY_PHASES
            and not self.match_over
            and len(self.seats) == self.capacity
            and all(s.ready for s in self.seats)
        )

    @property
    def phase_deadline(self) -> float | None:
        """The deadline of the phase as the players' clocks show it: while arranging, the
        arrange deadline even when a hosted hand's grace (``deadline``) comes first."""
        if self.phase is Phase.ARRANGING and self.deadline is not None:
            return self.arrange_deadline
        return self.deadline

    @property
    def revealed(self) -> bool:
        """The round's hands are public: the comparison has started (or it is settled)."""
        return self.phase in (Phase.COMPARING, Phase.SETTLED) or self.result is not None

    def to_dict(self) -> Json:
        return {
            "capacity": self.capacity,
            "config": _config_dict(self.config),
            "version": self.version,
            "phase": self.phase.value,
            "round_no": self.round_no,
            "seats": [s.to_dict() for s in self.seats],
            "deadline": self.deadline,
            "phase_started_at": self.phase_started_at,
            "arrange_deadline": self.arrange_deadline,
            "start_seat": self.start_seat,
            "commitment": self.commitment,
            "salt": self.salt,
            "deck": None if self.deck is None else format_cards(self.deck),
            "result": self.result,
            "lockstep": self.lockstep,
            "last_round": self.last_round,
            "held": self.held,
            "chat_text": self.chat_text,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableState:
        deck = data["deck"]
        config = _stored_config(data["config"])
        return cls(
            capacity=int(data["capacity"]),
            config=config,
            version=int(data["version"]),
            phase=Phase(data["phase"]),
            round_no=int(data["round_no"]),
            seats=tuple(SeatState.from_dict(s) for s in data["seats"]),
            deadline=_float(data["deadline"]),
            phase_started_at=_float(data["phase_started_at"]),
            arrange_deadline=_float(data["arrange_deadline"]),
            start_seat=data["start_seat"],
            commitment=data["commitment"],
            salt=data["salt"],
            deck=None if deck is None else _stored_cards(deck, config.deck.size, "deck"),
            result=data["result"],
            lockstep=bool(data.get("lockstep", False)),
            last_round=data.get("last_round"),
            held=bool(data.get("held", False)),
            chat_text=bool(data.get("chat_text", True)),
        )


# Reading a stored state is on every table command's path, so it is cheap: a configuration
# already seen is not parsed again (a table keeps its rules), and stored cards are looked up
# rather than parsed (the machine wrote them; anything else still raises).
_CONFIGS: list[tuple[Json, RuleConfig]] = []  # most recent first
_CONFIG_DICTS: dict[RuleConfig, Json] = {}
_CONFIG_CACHE_SIZE = 32


def _stored_config(data: Json) -> RuleConfig:
    for index, (seen, config) in enumerate(_CONFIGS):
        if seen == data:
            if index:
                _CONFIGS.insert(0, _CONFIGS.pop(index))
            return config
    config = RuleConfig.from_dict(data)
    _CONFIGS.insert(0, (copy.deepcopy(data), config))
    del _CONFIGS[_CONFIG_CACHE_SIZE:]
    return config


def _config_dict(config: RuleConfig) -> Json:
    """``config.to_dict()``, computed once per configuration. Shared: never mutated (it is
    only serialised into the stored state)."""
    data = _CONFIG_DICTS.get(config)
    if data is None:
        if len(_CONFIG_DICTS) >= _CONFIG_CACHE_SIZE:
            _CONFIG_DICTS.clear()
        data = _CONFIG_DICTS[config] = config.to_dict()
    return data


def _hand_size(texts: Any) -> int:
    """A stored hand holds 13 cards, or 16 with spare cards (RULES.md §12.4)."""
    return 16 if isinstance(texts, list) and len(texts) == 16 else 13


def _stored_cards(texts: Any, count: int, what: str) -> tuple[Card, ...]:
    cards = tuple(CARD_BY_TEXT.get(t) for t in texts) if isinstance(texts, list) else ()
    if len(cards) == count and None not in cards and len(set(cards)) == count:
        return cards  # type: ignore[return-value]
    # Raises with the reason (any card of any deck: the machine wrote them).
    return parse_cards(texts, count=count, what=what, deck=ANY_DECK)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def arranged_json(arranged: Arranged) -> Json:
    return {
        "front": format_cards(arranged.front),
        "middle": format_cards(arranged.middle),
        "back": format_cards(arranged.back),
    }


def parse_arranged(data: Mapping[str, Any]) -> Arranged:
    return Arranged(
        _stored_cards(data["front"], 3, "front"),
        _stored_cards(data["middle"], 5, "middle"),
        _stored_cards(data["back"], 5, "back"),
    )

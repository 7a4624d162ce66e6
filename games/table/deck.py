"""The deck: its canonical text, the shuffle commitment, and who gets which card.

The service shuffles (``secrets``) and hands the machine a deck, a salt and a starting seat;
the machine stays deterministic. Before any card is shown the table publishes the deck's
:func:`commitment`; the deck and salt are revealed at settlement, so anyone can recompute the
hash and replay the deal (:func:`deal_hands`) to check the shuffle was fixed in advance. The
tables of a duplicate match derive their deals from the match's secret seed instead
(:func:`seeded_deck`, below).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from games.rules.cards import Card, Deck

HAND_SIZE = 13


def deck_text(deck: Sequence[Card | str]) -> str:
    """The cards in deck order, canonical text (``"AS"``, ``"TD"``; with the variant decks of
    RULES.md §12 copies and jokers by name: ``"7D2"``, ``"RJ"``), joined by single spaces."""
    return " ".join(str(card) for card in deck)


def commitment(deck: Sequence[Card | str], salt: str) -> str:
    """The SHA-256 commitment (hex) to ``deck`` (the configured deck, shuffled) under
    ``salt``: ``SHA-256(deck_text + ":" + salt)``."""
    return hashlib.sha256(f"{deck_text(deck)}:{salt}".encode()).hexdigest()


def verify_commitment(deck: Sequence[Card | str], salt: str, expected: str) -> bool:
    """Whether a revealed deck and salt match the commitment published at the deal."""
    return commitment(deck, salt) == expected


def is_full_deck(deck: Sequence[Card], of: Deck) -> bool:
    """Whether ``deck`` holds each card of ``of`` exactly once."""
    return len(deck) == of.size and set(deck) == set(of.cards)


def deal_order(positions: Sequence[int], start_seat: int) -> tuple[int, ...]:
    """The round's positions counter-clockwise (increasing, wrapping) from ``start_seat``."""
    ordered = sorted(positions)
    i = ordered.index(start_seat)
    return tuple(ordered[i:] + ordered[:i])


def deal_hands(
    deck: Sequence[Card], order: Sequence[int], hand_size: int = HAND_SIZE
) -> dict[int, tuple[Card, ...]]:
    """Each position's cards (``hand_size`` of them: 13, or 16 with spare cards), in the
    order they are dealt.

    Dealing (RULES.md §8.2) gives ``deck[i]`` to ``order[i mod n]`` for the first
    ``hand_size · n`` cards, ``order`` being :func:`deal_order` from the starting seat.
    ``sequential`` and ``simultaneous`` deal the same cards; they differ only in pace
    (:func:`deal_offsets`)."""
    n = len(order)
    return {p: tuple(deck[j] for j in range(i, hand_size * n, n)) for i, p in enumerate(order)}


def deal_offsets(
    mode: str, n: int, index: int, interval_ms: int, hand_size: int = HAND_SIZE
) -> list[int]:
    """When (ms after the deal starts) each of the ``index``-th dealt seat's cards lands.

    A round of cards (one to each player) takes ``interval_ms`` in both modes: simultaneous
    gives the round's cards at once, sequential one after another, ``interval_ms / n`` apart.
    The design document makes only the simultaneous pace configurable ("依次轮流发牌…发牌速度不
    可配置"), so sequential follows it; a 4-player deal lasts 13 rounds either way (1.56 s at
    the default 120 ms) instead of 52 × 120 ms (6.2 s) of waiting (tempo)."""
    if mode == "simultaneous":
        return [k * interval_ms for k in range(hand_size)]
    return [(k * n + index) * interval_ms // n for k in range(hand_size)]


def deal_duration_ms(mode: str, n: int, interval_ms: int, hand_size: int = HAND_SIZE) -> int:
    """The whole deal: a round of ``interval_ms`` per card of a hand (:func:`deal_offsets`)."""
    return hand_size * interval_ms


# -- duplicate deals -------------------------------------------------------------------------------
#
# The tables of a duplicate match play the same deals: deal k of every table is derived from the
# match's secret ``seed`` (64 hex digits, committed to at the match's creation by SHA-256 of its
# text, revealed when the match ends), so anyone can recompute every deck, salt and starting seat
#
#     draw(label)   = the 64-bit big-endian integers of HMAC-SHA256(seed, f"{label}:{i}")
#                     for i = 0, 1, 2, …  (4 per digest);
#     uniform(n)    = the next draw x below 2**64 - (2**64 mod n), then x mod n (rejection
#                     sampling, so no value is favoured);
#     deck          = Fisher–Yates over the configured deck in deck order: for i from size - 1
#                     down to 1, swap card i with card uniform(i + 1), label f"deal:{k}";
#     start seat    = the sorted positions' element uniform(count), label f"start:{k}";
#     salt          = HMAC-SHA256(seed, f"salt:{k}") hex, first 32 digits.
#
# The deck commitment of each round is then the ordinary one (deck text and salt, above).

SEED_HEX_DIGITS = 64


def seed_commitment(seed: str) -> str:
    """The match's public commitment to its secret seed: SHA-256 of the seed's text, hex."""
    return hashlib.sha256(seed.encode()).hexdigest()


def _key(seed: str) -> bytes:
    if len(seed) != SEED_HEX_DIGITS:
        raise ValueError(f"a match seed is {SEED_HEX_DIGITS} hex digits")
    return bytes.fromhex(seed)


class _Draws:
    """Uniform integers from the HMAC stream of ``(seed, label)``."""

    def __init__(self, seed: str, label: str) -> None:
        self._key = _key(seed)
        self._label = label
        self._counter = 0
        self._pending: list[int] = []

    def _next64(self) -> int:
        if not self._pending:
            digest = hmac.new(
                self._key, f"{self._label}:{self._counter}".encode(), hashlib.sha256
            ).digest()
            self._counter += 1
            self._pending = [int.from_bytes(digest[i : i + 8], "big") for i in (24, 16, 8, 0)]
        return self._pending.pop()

    def uniform(self, n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while True:
            x = self._next64()
            if x < limit:
                return x % n


def seeded_deck(cards: Sequence[Card], seed: str, deal_no: int) -> tuple[Card, ...]:
    """Deal ``deal_no``'s deck: ``cards`` (the configured deck in deck order) shuffled by the
    match's seed."""
    deck = list(cards)
    draws = _Draws(seed, f"deal:{deal_no}")
    for i in range(len(deck) - 1, 0, -1):
        j = draws.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def seeded_start_seat(positions: Sequence[int], seed: str, deal_no: int) -> int:
    """Deal ``deal_no``'s starting seat among ``positions``."""
    ordered = sorted(positions)
    return ordered[_Draws(seed, f"start:{deal_no}").uniform(len(ordered))]


def seeded_salt(seed: str, deal_no: int) -> str:
    """Deal ``deal_no``'s salt (32 hex digits)."""
    return hmac.new(_key(seed), f"salt:{deal_no}".encode(), hashlib.sha256).hexdigest()[:32]

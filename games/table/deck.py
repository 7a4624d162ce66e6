"""The deck: its canonical text, the shuffle commitment, and who gets which card.

The service shuffles (``secrets``) and hands the machine a deck, a salt and a starting seat;
the machine stays deterministic. Before any card is shown the table publishes

    commitment = SHA-256( deck_text + ":" + salt ), hex,

where ``deck_text`` is the configured deck's cards in deck order, canonical text (``"AS"``,
``"TD"``; with the variant decks of RULES.md §12 copies and jokers by name: ``"7D2"``,
``"RJ"``), joined by single spaces. The deck and salt are revealed at settlement, so anyone
can recompute the hash and replay the deal (:func:`deal_hands`) to check the shuffle was fixed
in advance.

Dealing (RULES.md §8.2) gives ``deck[i]`` to ``order[i mod n]`` for the first h·n cards
(h, the hand size: 13, or 16 with spare cards),
where ``order`` is the round's seats counter-clockwise (increasing position, wrapping) from the
starting seat. ``sequential`` and ``simultaneous`` deal the same cards; they differ only in
pace: a round of cards every ``deal_interval_ms``, one player at a time or all at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from games.rules.cards import Card, Deck

HAND_SIZE = 13


def deck_text(deck: Sequence[Card | str]) -> str:
    return " ".join(str(card) for card in deck)


def commitment(deck: Sequence[Card | str], salt: str) -> str:
    """The SHA-256 commitment (hex) to ``deck`` under ``salt``."""
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
    """Each position's cards (``hand_size`` of them), in the order they are dealt."""
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
    the default 120 ms) instead of 52 × 120 ms (6.2 s) of waiting (issue 14, tempo)."""
    if mode == "simultaneous":
        return [k * interval_ms for k in range(hand_size)]
    return [(k * n + index) * interval_ms // n for k in range(hand_size)]


def deal_duration_ms(mode: str, n: int, interval_ms: int, hand_size: int = HAND_SIZE) -> int:
    """The whole deal: a round of ``interval_ms`` per card of a hand (:func:`deal_offsets`)."""
    return hand_size * interval_ms

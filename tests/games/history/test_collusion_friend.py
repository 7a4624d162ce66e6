"""Losing on purpose to a friend (games.history.collusion with games.rules.dumping), at a table
shared with bots and honest players, on the classic deck, with spare cards and with jokers.

One account plays its worst split every round; its friend sits beside it every round and plays
the engine's best; the third seat goes round three honest people (one plays a random legal
split, the weakest honest play; one the engine's best; one as the easy bot level plays), the
fourth is an easy bot. Every round is scored and stored as the settlement stores it (its
`result` with the real transfers), so the coins go where the water went: from the dumper to
everyone it gave water to.

The scan flags the dumper -> friend pair, with the rounds in which the friend gained from the
dumper's choice as its evidence, and no honest person, friend or bot as a loser. The play
cannot tell whom a dumper meant to feed: the honest people who sat with it gained too, and
their pairs with it may be flagged as well; the friend's, who shared every round, carries the
most evidence.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import CollusionFlag, CollusionReason, User
from benchmarks.collusion_detection import play
from games.history.collusion import collusion_scan
from games.live import store as table_store
from games.models import Round, RoundPlayer
from games.rules.api import result_json
from games.rules.arrange import arrange, worst_arrangement
from games.rules.cards import Card, format_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.presets import preset_config
from games.rules.scoring import Arranged, Seat, score_round
from games.table.state import arranged_json
from lobby.services import room_create
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db

SPARE = preset_config("duosanzhang")  # 65 cards, 16 dealt, any 13 played
JOKERS = preset_config("laizi")  # 54 cards with RJ and BJ
BASE = 10


def _bot(name: str) -> User:
    bot = make_player(name)
    User.objects.filter(pk=bot.pk).update(is_bot=True)
    bot.is_bot = True
    return bot


def _played(
    cards: tuple[Card, ...], policy: str, config: RuleConfig, rng: random.Random
) -> tuple[Arranged, tuple[Card, ...]]:
    """What ``policy`` plays with its dealt cards at a table of four: the arrangement and the
    spare cards set aside (the engine's choice of the 13, with spare cards)."""
    top = arrange(cards, config, limit=1, opponents=3).best
    kept = top.front + top.middle + top.back
    if policy == "best":
        return top.arranged(), top.unused
    if policy == "dumper":
        return worst_arrangement(kept, config, opponents=3), top.unused
    return play(kept, policy, 3, rng, 1, config), top.unused  # "random", "easy"


class Table:
    """Rounds at one room's table, scored and stored as settled, a minute apart."""

    def __init__(self, owner: User, config: RuleConfig) -> None:
        self.config = replace(config, base_score=BASE)
        self.room = room_create(owner=owner, name="Friends", base_score=BASE, seats=4)
        self.table = table_store.table_for_room(room=self.room)
        self.number = 0
        self.at = timezone.now() - timedelta(hours=3)
        self.rng = random.Random(7)

    def play(self, seated: list[tuple[User, str]]) -> Round:
        self.number += 1
        self.at += timedelta(minutes=1)
        config = self.config
        deck = list(config.deck.cards)
        random.Random(1000 + self.number).shuffle(deck)
        size = config.hand_size
        dealt = [tuple(deck[size * i : size * (i + 1)]) for i in range(len(seated))]
        plays = [
            _played(cards, policy, config, self.rng)
            for cards, (_user, policy) in zip(dealt, seated, strict=True)
        ]
        seats = [
            Seat(str(user.pk), arranged, unused=unused)
            for (user, _policy), (arranged, unused) in zip(seated, plays, strict=True)
        ]
        round_ = Round.objects.create(
            table=self.table,
            number=self.number,
            config=config.to_dict(),
            commitment="x",
            started_at=self.at,
            settled_at=self.at,
            result=result_json(score_round(seats, config)),
        )
        for position, ((user, _policy), cards, (arranged, unused)) in enumerate(
            zip(seated, dealt, plays, strict=True)
        ):
            RoundPlayer.objects.create(
                round=round_,
                user=user,
                position=position,
                cards=" ".join(format_cards(cards)),
                arrangement=arranged_json(arranged),
                unused=" ".join(format_cards(unused)),
            )
        return round_


def _lose_to_a_friend(
    config: RuleConfig, rounds: int, caplog: pytest.LogCaptureFixture
) -> tuple[User, User, list[User]]:
    tag = config.extra_suits * 100 + config.jokers * 10 + config.spare_cards
    dumper, friend = make_player(f"dump{tag}"), make_player(f"friend{tag}")
    weak, strong, level = (make_player(f"{n}{tag}") for n in ("weak", "strong", "level"))
    bot = _bot(f"bot{tag}")
    table = Table(dumper, config)
    honest = [(weak, "random"), (strong, "best"), (level, "easy")]
    played = [
        table.play([(dumper, "dumper"), (friend, "best"), honest[n % 3], (bot, "easy")])
        for n in range(rounds)
    ]

    result = collusion_scan()

    # Every round was judged: no spare-card or joker round is skipped.
    assert result.judged == rounds and "cannot be judged" not in caplog.text
    quality = {
        r.round_id: r.quality for r in RoundPlayer.objects.filter(user=dumper).order_by("round_id")
    }
    # Every round a sign of dumping, most the worst (a few hands have many splits tied with
    # their worst: a careful loss then, games.rules.dumping.WORST_TIE_SHARE).
    signs = [q["sign"] for q in quality.values()]
    assert set(signs) <= {"worst", "careful_loss"} and signs.count("worst") >= rounds - 2
    assert all(
        RoundPlayer.objects.get(round=r, user=friend).quality["sign"] == "none" for r in played
    )

    flags = list(CollusionFlag.objects.all())
    assert {f.loser_id for f in flags} == {dumper.pk}  # no honest person, friend or bot
    flag = CollusionFlag.objects.get(loser=dumper, winner=friend)
    assert CollusionReason.DELIBERATE_PLAY in flag.reasons
    assert flag.score >= flag.threshold and flag.flow > 0
    assert flag.shared_rounds == rounds
    fed = [pk for pk, q in quality.items() if q["given"].get(str(friend.pk), 0) > 0]
    assert len(fed) >= rounds // 2
    assert [row["round"] for row in flag.evidence] == fed
    assert all(row["given"] > 0 for row in flag.evidence)
    assert flag.water_given == sum(row["given"] for row in flag.evidence)
    assert all(f.score <= flag.score and len(f.evidence) <= len(flag.evidence) for f in flags)
    return dumper, friend, [weak, strong, level]


def test_losing_on_purpose_to_a_friend_at_a_table_with_bots_and_honest_people(caplog) -> None:  # type: ignore[no-untyped-def]
    _lose_to_a_friend(DEFAULT_CONFIG, 15, caplog)


def test_12_4_losing_on_purpose_to_a_friend_with_spare_cards(caplog) -> None:  # type: ignore[no-untyped-def]
    _lose_to_a_friend(SPARE, 12, caplog)


def test_12_2_losing_on_purpose_to_a_friend_with_jokers(caplog) -> None:  # type: ignore[no-untyped-def]
    _lose_to_a_friend(JOKERS, 12, caplog)


def test_a_rating_lifted_by_a_friend_s_losses_is_seen(caplog) -> None:  # type: ignore[no-untyped-def]
    """Losing on purpose lifts the friend's skill rating and sinks the dumper's; the
    detector's flag on the pair is what support sees of it (docs/security.md). (The honest
    people who sat with the dumper gained from it too: the rating cannot tell whom a dumper
    meant to feed, which is why the flag, not the rating, is the evidence.)"""
    from games.history.rating import player_rating, rating_family, ratings_catch_up

    dumper, friend, _honest = _lose_to_a_friend(DEFAULT_CONFIG, 15, caplog)

    assert ratings_catch_up() == 15
    family = rating_family(DEFAULT_CONFIG)
    lifted, sunk = player_rating(friend.pk, family), player_rating(dumper.pk, family)
    assert lifted is not None and sunk is not None
    assert lifted[0] > 1600 and sunk[0] < 1400
    assert CollusionFlag.objects.filter(loser=dumper, winner=friend).exists()

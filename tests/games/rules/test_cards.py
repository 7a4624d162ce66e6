"""RULES.md §1: cards and notation."""

import pytest

from games.rules.cards import ALL_CARDS, DECK, Card, Rank, Suit, parse_card, parse_cards, sort_cards
from games.rules.errors import DuplicateCardError, InvalidCardError, RulesError, WrongCountError


def test_1_deck_has_52_distinct_cards_with_indices_0_to_51():
    assert len(DECK) == 52 == len(set(DECK))
    assert [card.index for card in DECK] == list(range(52))
    assert all(Card.from_index(card.index) == card for card in DECK)


def test_1_text_form_round_trips():
    for card in DECK:
        assert parse_card(str(card)) == card
    assert str(Card(Rank.TEN, Suit.DIAMONDS)) == "TD"


@pytest.mark.parametrize("text", ["as", "As", " AS ", "aS"])
def test_1_input_is_case_insensitive(text):
    assert parse_card(text) == Card(Rank.ACE, Suit.SPADES)


@pytest.mark.parametrize("text", ["10d", "10D", "Td", "TD"])
def test_1_ten_is_read_as_t(text):
    assert parse_card(text) == Card(Rank.TEN, Suit.DIAMONDS)


@pytest.mark.parametrize("text", ["1S", "AX", "", "A", "ASS", "11H", "ZZ", 5, None, ["AS"]])
def test_1_bad_cards_are_rejected_with_the_offending_text(text):
    with pytest.raises(InvalidCardError) as err:
        parse_card(text)
    assert err.value.code == "bad_card"
    assert repr(text) in str(err.value)


def test_1_duplicate_card_is_named():
    with pytest.raises(DuplicateCardError, match="7H appears twice"):
        parse_cards(["7H", "2C", "7h"])


def test_1_wrong_count():
    with pytest.raises(WrongCountError, match="must have 13 cards, got 12"):
        parse_cards([str(c) for c in DECK[:12]], count=13)


def test_1_errors_share_one_base_that_is_a_value_error():
    assert issubclass(InvalidCardError, RulesError)
    assert issubclass(RulesError, ValueError)


def test_1_display_order_is_rank_then_spades_hearts_clubs_diamonds():
    cards = parse_cards(["2D", "AS", "AD", "AH", "AC", "KS"])
    assert [str(x) for x in sort_cards(cards)] == ["AS", "AH", "AC", "AD", "KS", "2D"]


def test_1_equal_cards_hash_alike_and_every_card_of_every_deck_hashes_apart():
    assert len({hash(c) for c in ALL_CARDS}) == len(ALL_CARDS) == 80
    for card in ALL_CARDS:
        again = Card(card.rank, card.suit, card.copy)
        assert again == card and hash(again) == hash(card)
        assert {again: 1}[card] == 1

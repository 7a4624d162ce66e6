"""Table chat (games.table.chat): phrases, reactions and free text as public events;
what is refused, and that text stays plain text."""

from __future__ import annotations

from dataclasses import replace

import pytest

from games.table import machine
from games.table.chat import MAX_MARKS_PER_BASE, MAX_TEXT_CHARS, PHRASES, REACTIONS, clean_text
from games.table.errors import TableError
from games.table.perspective import events_for

from .helpers import Game


def test_a_phrase_a_reaction_and_a_text_are_public_events_of_the_table() -> None:
    game = Game(3)
    game.do(machine.chat, position=0, kind="phrase", value="hurry")
    game.do(machine.chat, position=1, kind="reaction", value="clap")
    game.do(machine.chat, position=2, kind="text", value="  gl   hf  ")
    chats = game.events("chat")
    assert [e.payload for e in chats] == [
        {"position": 0, "kind": "phrase", "value": "hurry"},
        {"position": 1, "kind": "reaction", "value": "clap"},
        {"position": 2, "kind": "text", "value": "gl hf"},
    ]
    for viewer in ("p0", "p1", "p2", None):  # every seat and a spectator alike
        assert [e.payload for e in events_for(chats, viewer)] == [e.payload for e in chats]


@pytest.mark.parametrize(
    ("kind", "value", "code"),
    [
        ("phrase", "insult", "bad_chat"),
        ("reaction", "skull", "bad_chat"),
        ("text", "", "bad_chat"),
        ("text", "   ", "bad_chat"),
        ("text", "x" * (MAX_TEXT_CHARS + 1), "bad_chat"),
        ("text", "hi\u202eevil", "bad_chat"),  # a bidi override
        ("text", "zero\u200bwidth", "bad_chat"),
        ("text", "bell\x07", "bad_chat"),
        ("text", 42, "bad_chat"),
        ("text", "\u3164", "bad_chat"),  # Hangul filler: a letter that draws nothing
        ("text", "\u3164 \u3164\u3164", "bad_chat"),
        ("text", "\u2800\u2800", "bad_chat"),  # the blank Braille pattern
        ("text", "\u115f\u1160\uffa0", "bad_chat"),  # the other Hangul fillers
        ("text", "\u0301\u0302\u0303", "bad_chat"),  # combining marks and nothing under them
        ("text", "\u034f\ufe0f", "bad_chat"),  # grapheme joiner, variation selector
        ("text", "\u3000\u3164\u00a0", "bad_chat"),  # spaces around a filler
        ("text", "a" + "\u0301" * 60, "bad_chat"),  # 60 stacked marks
        ("text", "ok x" + "\u0300" * (MAX_MARKS_PER_BASE + 1), "bad_chat"),
        ("shout", "hi", "bad_chat"),
    ],
)
def test_bad_chat_is_refused_and_changes_nothing(kind: str, value: object, code: str) -> None:
    game = Game(2)
    before = game.state
    with pytest.raises(TableError) as refused:
        machine.chat(game.state, position=0, kind=kind, value=value, now=game.now)
    assert refused.value.code == code
    assert game.state == before


def test_free_text_can_be_turned_off_but_phrases_and_reactions_stay() -> None:
    game = Game(2)
    game.state = replace(game.state, chat_text=False)
    with pytest.raises(TableError) as refused:
        game.do(machine.chat, position=0, kind="text", value="hello")
    assert refused.value.code == "chat_text_off"
    game.do(machine.chat, position=0, kind="phrase", value="hello")
    game.do(machine.chat, position=1, kind="reaction", value="laugh")
    assert len(game.events("chat")) == 2


def test_only_a_seated_player_chats() -> None:
    game = Game(2, capacity=4)
    with pytest.raises(TableError) as refused:
        game.do(machine.chat, position=3, kind="phrase", value="hello")
    assert refused.value.code == "not_seated"


def test_markup_is_kept_as_the_text_it_is() -> None:
    text = '<img src=x onerror="alert(1)"> & <b>bold</b>'
    assert clean_text(text) == text  # stored as typed: clients show it as text, never markup
    assert clean_text("中文 和 English") == "中文 和 English"


def test_every_phrase_has_both_languages_and_every_reaction_a_symbol() -> None:
    assert all(zh and en and zh != en for zh, en in PHRASES.values())
    assert all(symbol for symbol in REACTIONS.values())


def test_text_with_something_visible_and_real_scripts_marks_is_kept() -> None:
    # Vietnamese in NFD (two marks on one letter), Thai (vowel + tone mark), Tibetan (a stack of
    # four marks), a visible word beside a filler, and MAX_MARKS_PER_BASE marks exactly.
    for text in (
        "Vie\u0323\u0302t",
        "\u0e19\u0e49\u0e33",
        "\u0f67\u0fa8\u0fb1\u0f71\u0f7e",
        "\u3164 hi",
        "o" + "\u0308" * MAX_MARKS_PER_BASE,
        "\u2800!",
    ):
        assert clean_text(text) == text


def test_a_refused_invisible_text_sends_nothing() -> None:
    game = Game(2)
    with pytest.raises(TableError) as refused:
        game.do(machine.chat, position=0, kind="text", value="\u3164\u2800")
    assert refused.value.code == "bad_chat"
    assert "visible" in refused.value.message
    assert refused.value.to_dict()["reason"] == "invisible"  # the page words it
    assert game.events("chat") == []
    with pytest.raises(TableError) as stacked:
        game.do(machine.chat, position=0, kind="text", value="x" + "\u0301" * 20)
    assert stacked.value.to_dict()["max_marks"] == MAX_MARKS_PER_BASE
    assert game.events("chat") == []

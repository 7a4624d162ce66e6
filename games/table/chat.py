"""Table chat: quick phrases, reactions and, where the room allows it, short free text.

A chat message is a public table event (``chat``: ``position, kind, value``) like any other:
every seat sees it, it is logged with the table's events (support reads a round's chat in its
audit), and a reconnecting client gets it back with what it missed. Phrases and reactions are
ids from fixed lists, shown in the reader's language; free text is plain text only — control
and formatting characters are refused, whitespace is collapsed, a text must show something
(:func:`has_visible`) and a character carries at most MAX_MARKS_PER_BASE combining marks, and
clients put it on the page as text, never as markup. :func:`chat` is the command that sends one.
"""

from __future__ import annotations

import unicodedata

from .errors import TableError
from .events import Step, Transition
from .guards import seat_at
from .state import TableState

# Quick phrases: id -> (Chinese, English).
PHRASES: dict[str, tuple[str, str]] = {
    "hello": ("大家好", "Hello everyone"),
    "hurry": ("快点吧", "Hurry up"),
    "nice_hand": ("好牌", "Nice hand"),
    "well_played": ("打得好", "Well played"),
    "unlucky": ("手气不好", "Unlucky"),
    "again": ("再来一局", "One more round"),
    "thanks": ("谢谢", "Thanks"),
    "bye": ("再见", "Bye"),
}
# Reactions, floated over the sender's seat: id -> the symbol shown.
REACTIONS: dict[str, str] = {
    "laugh": "😄",
    "clap": "👏",
    "thumbs_up": "👍",
    "wow": "😮",
    "sad": "😢",
    "angry": "😠",
}
KINDS = ("phrase", "reaction", "text")
MAX_TEXT_CHARS = 80
# Combining marks one character may carry (counted in the NFC form, where precomposed letters
# carry none). Living scripts need at most four: Vietnamese stacks two (ệ), Thai a vowel and a
# tone mark, Devanagari a nukta, a vowel sign and a nasal mark, Tibetan a stack such as ཧྨྱཱཾ
# (four). Past that, marks are only drawn over the neighbouring lines of the chat ("Zalgo").
MAX_MARKS_PER_BASE = 4
# Letters and symbols that draw nothing: the Hangul fillers and the blank Braille pattern.
# (Control and formatting characters, zero-width ones included, are refused on their own.)
BLANK_GRAPHICS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def has_visible(text: str) -> bool:
    """Whether the text draws anything: a letter, digit, punctuation or symbol that is not a
    blank (BLANK_GRAPHICS). Spaces, combining marks alone and fillers draw nothing."""
    return any(unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_GRAPHICS for ch in text)


def most_marks_per_base(text: str) -> int:
    """The longest run of combining marks (categories Mn, Mc, Me) in the text's NFC form."""
    most = run = 0
    for ch in unicodedata.normalize("NFC", text):
        run = run + 1 if unicodedata.category(ch)[0] == "M" else 0
        most = max(most, run)
    return most


def clean_text(value: object) -> str:
    """Free text as it is kept and shown: stripped, runs of whitespace made one space, at most
    MAX_TEXT_CHARS characters; control and formatting characters (bidi overrides, zero-width
    joiners…), a text that shows nothing (only fillers, blank Braille, combining marks) and
    more than MAX_MARKS_PER_BASE combining marks on one character refused (``bad_chat``)."""
    if not isinstance(value, str):
        raise TableError("bad_chat", "a chat text must be a string")
    text = " ".join(value.split())
    if not text:
        raise TableError("bad_chat", "a chat text cannot be empty")
    if len(text) > MAX_TEXT_CHARS:
        raise TableError(
            "bad_chat", f"a chat text has at most {MAX_TEXT_CHARS} characters", max=MAX_TEXT_CHARS
        )
    if any(unicodedata.category(ch)[0] == "C" for ch in text):
        raise TableError("bad_chat", "a chat text cannot hold control or formatting characters")
    if not has_visible(text):
        raise TableError(
            "bad_chat", "a chat text must show at least one visible character", reason="invisible"
        )
    if most_marks_per_base(text) > MAX_MARKS_PER_BASE:
        raise TableError(
            "bad_chat",
            f"a character carries at most {MAX_MARKS_PER_BASE} combining marks",
            max_marks=MAX_MARKS_PER_BASE,
        )
    return text


def chat_value(kind: object, value: object, *, text_allowed: bool) -> tuple[str, str]:
    """``(kind, value)`` as the ``chat`` event carries it, or TableError saying why not."""
    if kind == "phrase":
        if not isinstance(value, str) or value not in PHRASES:
            raise TableError("bad_chat", "unknown phrase", phrases=sorted(PHRASES))
        return kind, value
    if kind == "reaction":
        if not isinstance(value, str) or value not in REACTIONS:
            raise TableError("bad_chat", "unknown reaction", reactions=sorted(REACTIONS))
        return kind, value
    if kind == "text":
        if not text_allowed:
            raise TableError("chat_text_off", "free-text chat is turned off at this table")
        return kind, clean_text(value)
    raise TableError("bad_chat", "a chat message is a phrase, a reaction or a text", kinds=KINDS)


def verify_chat(state: TableState, *, position: int, kind: str, value: object) -> None:
    seat_at(state, position)
    chat_value(kind, value, text_allowed=state.chat_text)


def chat(state: TableState, *, position: int, kind: str, value: object, now: float) -> Transition:
    """A seated player's chat message (``games.table.chat``): a public ``chat`` event."""
    verify_chat(state, position=position, kind=kind, value=value)
    kind, text = chat_value(kind, value, text_allowed=state.chat_text)
    step = Step(state)
    step.emit("chat", {"position": position, "kind": kind, "value": text})
    return step.done()

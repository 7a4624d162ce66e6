"""User names that look alike: the UTS #39 skeleton.

Two strings are *confusable* when they have the same skeleton (Unicode Technical Standard #39,
section 4): decompose (NFD), drop the default-ignorable code points, replace each character by
its prototype from Unicode's confusables table, decompose again. ``аlice`` (Cyrillic а) and
``alice`` share the skeleton ``alice``; so do ``paypal`` and ``pаypа1``. A user name's key
(:func:`name_key`) is the skeleton of its lower-cased skeleton (i read as l), so that
``Alice``, ``ALICE`` and ``AIice`` (capital I for l) meet ``alice`` too. Sign-up, and the
admin's add and rename, refuse a name whose key another account already has
(``accounts.services.username_refusal``).

No maintained library on PyPI computes the skeleton, so the table is vendored:
``accounts/data/confusables.txt`` (Unicode 13.0.0, unchanged, with Unicode's licence beside it in
``LICENSE-UNICODE.txt``). A newer file can replace it as it is; existing keys are then out of date
until ``manage.py migrate`` is followed by a resave (the key is written on every save).
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path

CONFUSABLES = Path(__file__).with_name("data") / "confusables.txt"

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt): characters that draw
# nothing where they are not understood. The skeleton drops them; a user name may not hold any.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def is_default_ignorable(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE)


@functools.cache
def prototypes() -> dict[str, str]:
    """Unicode's confusables table: character -> its prototype (one or more characters)."""
    table: dict[str, str] = {}
    with CONFUSABLES.open(encoding="utf-8-sig") as lines:
        for line in lines:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            source, target, *_rest = (field.strip() for field in data.split(";"))
            table[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in target.split())
    return table


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: equal skeletons, confusable strings."""
    table = prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    mapped = "".join(table.get(ch, ch) for ch in decomposed if not is_default_ignorable(ch))
    return unicodedata.normalize("NFD", mapped)


def name_key(username: str) -> str:
    """What two user names that a reader could take for one another have in common: the
    skeleton of the lower-cased skeleton, with i read as l.

    Names that differ only in case are one name (Django refuses ``Alice`` beside ``alice``),
    and capital I is confusable with l; so i and l are one letter here too, or ``TIGER`` would
    escape ``tiger`` by way of ``TlGER``. The price: ``lisa`` and ``iisa`` are look-alikes."""
    return skeleton(skeleton(username).casefold()).replace("i", "l")


def has_invisible(username: str) -> bool:
    """Whether the name holds a character that draws nothing (a default-ignorable one, such as
    the Hangul filler U+3164, which Django's user name rule lets through as a letter)."""
    return any(is_default_ignorable(ch) for ch in username)

"""JSON for the hot path: every socket frame sent, and the table's state and events saved.

orjson (C) encodes a table's state about 15 times faster than the standard library and a
frame about 10 times; profiles of daphne under load showed the standard encoder among the
largest costs of a round (docs/load-and-faults.md, "Design choices that hold"). The output is
compact JSON (no spaces), UTF-8 text as it is (not \\u-escaped); NaN and infinities become null.
Keys that are not strings (an int) are written as strings, as the standard library does.

Parsing what clients send stays on the standard library (``json.loads``): frames are small,
and its errors are the ones the protocol documents.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> str:
    """``value`` as compact JSON text."""
    return orjson.dumps(value, option=_OPTIONS).decode()


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text`` (trusted: the platform's own, e.g. a stored state)."""
    return orjson.loads(text)

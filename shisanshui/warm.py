"""Start-up of a long-running process: load what the first table would load, then freeze it.

CPython's cyclic garbage collector walks every tracked object in its oldest generation from
time to time; in a web process that is all of Django, the apps and the engine's tables —
measured at 65–70 ms per full collection in daphne during a load run, a pause every table on
the process feels (the human-pace p99). ``gc.freeze()`` moves everything alive at start-up to
a permanent generation the collector never walks again, so full collections only walk what
was made since. The engine's lazily loaded parts (row tables, the suggestion search) are
loaded first so that they are frozen too.

The youngest generation is collected every ``GC_THRESHOLD[0]`` new objects instead of 700:
a table command, its events and its frames make thousands of short-lived objects, and at
700 daphne ran a collection for every few of them (at 24 tables, human pace: 560 collections
a minute, 2.5 % of its CPU; at 10,000, about 1 %, each collection still a few ms).
"""

from __future__ import annotations

import gc
import logging
import pprint
from typing import Any

logger = logging.getLogger(__name__)


def plain_frame_log_text() -> None:
    """autobahn (daphne's WebSocket protocol) builds the text of a debug log line for every
    frame it writes, even with debug logging off: ``hltype`` and ``hlval`` colour it through
    click, about 1.5 % of daphne's CPU under load. They only decorate log text, so the
    protocol module gets plain ones (the same words, no colour), and a ``pformat`` that
    formats only when autobahn logs at debug level."""
    try:
        from autobahn.websocket import protocol
    except ImportError:  # not under daphne
        return
    protocol.hltype = _plain_type  # type: ignore[attr-defined]
    protocol.hlval = _plain  # type: ignore[attr-defined]
    # And every new connection pretty-prints its configuration (about 30 settings) for a
    # debug line: 3 % of daphne's CPU when sockets connect in a burst.
    protocol.pformat = _debug_pformat  # type: ignore[attr-defined]


def _debug_pformat(value: object, *args: Any, **kwargs: Any) -> str:
    """``pprint.pformat`` when autobahn logs at debug level; otherwise the empty text of a
    line nobody writes."""
    import txaio

    try:
        quiet = txaio.get_global_log_level() not in ("debug", "trace")
    except RuntimeError:  # no framework chosen yet: autobahn is not serving
        quiet = False
    return "" if quiet else pprint.pformat(value, *args, **kwargs)


def _plain_type(obj: object) -> str:
    return f"<{getattr(obj, '__qualname__', type(obj).__qualname__)}>"


def _plain(value: object, *args: object, **kwargs: object) -> str:
    return str(value)


# Objects made (less those freed) between collections of the youngest generation; the older
# generations as by default.
GC_THRESHOLD = (10_000, 10, 10)


def warm_and_freeze() -> None:
    try:
        from games.rules.cards import DECK
        from games.rules.config import DEFAULT_CONFIG
        from games.table.suggest import suggestions

        suggestions(DECK[:13], DEFAULT_CONFIG)  # loads the classic deck's tables
    except Exception:  # never keep a process from starting
        logger.exception("warming the engine failed")
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)

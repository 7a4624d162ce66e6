"""Start-up of a long-running process: load what the first table would load, then freeze it.

CPython's cyclic garbage collector walks every tracked object in its oldest generation from
time to time; in a web process that is all of Django, the apps and the engine's tables —
measured at 65–70 ms per full collection in daphne during a load run, a pause every table on
the process feels (the human-pace p99). ``gc.freeze()`` moves everything alive at start-up to
a permanent generation the collector never walks again, so full collections only walk what
was made since. The engine's lazily loaded parts (row tables, the suggestion search) are
loaded first so that they are frozen too.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger(__name__)


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

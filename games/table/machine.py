"""The commands of one table: ``verify_x`` raises :class:`TableError` with the reason,
``can_x`` answers True/False, ``x`` applies and returns a :class:`Transition`.

Pure and deterministic: no clock (``now`` is an argument, epoch seconds), no randomness (the
service supplies the shuffled deck, its salt and the starting seat), no I/O, no Django. The
service runs each command under the table's row lock: apply, save ``state.to_dict()`` (whose
deadline, ``transition.timer``, the workers' poller reads from the row), and on commit send
the events. Any command may leave the table ``dealing`` with ``state.awaiting_deal`` set (the
last Ready, a leave, a Ready timeout): the service then calls :func:`deal` in the same
transaction.

The commands live by job — :mod:`~games.table.seating` (sit, ready, leave, dismiss,
set_config), :mod:`~games.table.playing` (deal, choose_special, submit, save_draft),
:mod:`~games.table.connections`, :mod:`~games.table.timeouts`, :mod:`~games.table.lockstep`
(a duplicate match's start and release), :mod:`~games.table.chat` — and are all named here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec

from .chat import chat, verify_chat
from .connections import disconnect, reconnect, verify_disconnect, verify_reconnect
from .errors import TableError
from .lockstep import release, start, verify_release, verify_start
from .playing import (
    choose_special,
    deal,
    save_draft,
    submit,
    verify_choose_special,
    verify_deal,
    verify_save_draft,
    verify_submit,
)
from .seating import (
    dismiss,
    leave,
    ready,
    set_config,
    sit,
    verify_dismiss,
    verify_leave,
    verify_ready,
    verify_set_config,
    verify_sit,
)
from .timeouts import timeout, verify_timeout

P = ParamSpec("P")


def _can(verify: Callable[P, None]) -> Callable[P, bool]:
    def can(*args: P.args, **kwargs: P.kwargs) -> bool:
        try:
            verify(*args, **kwargs)
        except TableError:
            return False
        return True

    can.__doc__ = f"Whether {verify.__name__} would pass."
    return can


can_sit = _can(verify_sit)
can_ready = _can(verify_ready)
can_leave = _can(verify_leave)
can_start = _can(verify_start)
can_chat = _can(verify_chat)
can_release = _can(verify_release)
can_set_config = _can(verify_set_config)
can_deal = _can(verify_deal)
can_choose_special = _can(verify_choose_special)
can_submit = _can(verify_submit)
can_save_draft = _can(verify_save_draft)
can_disconnect = _can(verify_disconnect)
can_reconnect = _can(verify_reconnect)
can_timeout = _can(verify_timeout)

__all__ = [
    "sit",
    "verify_sit",
    "can_sit",
    "ready",
    "verify_ready",
    "can_ready",
    "leave",
    "verify_leave",
    "can_leave",
    "dismiss",
    "verify_dismiss",
    "set_config",
    "verify_set_config",
    "can_set_config",
    "start",
    "verify_start",
    "can_start",
    "release",
    "verify_release",
    "can_release",
    "chat",
    "verify_chat",
    "can_chat",
    "deal",
    "verify_deal",
    "can_deal",
    "choose_special",
    "verify_choose_special",
    "can_choose_special",
    "submit",
    "verify_submit",
    "can_submit",
    "save_draft",
    "verify_save_draft",
    "can_save_draft",
    "disconnect",
    "verify_disconnect",
    "can_disconnect",
    "reconnect",
    "verify_reconnect",
    "can_reconnect",
    "timeout",
    "verify_timeout",
    "can_timeout",
]

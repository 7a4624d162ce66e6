"""The web process: daphne on uvloop's event loop.

    python -m shisanshui.web -b 127.0.0.1 -p 8000 shisanshui.asgi:application

takes exactly daphne's command line (``daphne --help``). daphne runs Twisted's asyncio reactor
on an event loop it makes when its server module is imported; this module makes that loop a
uvloop one first (libuv, in C). Everything on the loop gets cheaper: the sockets' reads and
writes, the channel layer's and the rate limits' Redis connections, every callback and timer.
Measured in paired runs (``python -m benchmarks.compare``): a few per cent less of daphne's CPU
per round (docs/load-and-faults.md, "Design choices that hold").
"""

from __future__ import annotations

import asyncio
import sys

import uvloop


def use_uvloop() -> None:
    """New event loops are uvloop's from now on (daphne's included: make it before importing
    ``daphne.server``)."""
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def main(argv: list[str] | None = None) -> None:
    """Run daphne with ``argv`` (the command line's by default) on a uvloop event loop."""
    use_uvloop()
    from daphne import server
    from daphne.cli import CommandLineInterface

    if not isinstance(server.twisted_loop, uvloop.Loop):  # daphne.server was imported earlier
        raise SystemExit(f"daphne's event loop is {type(server.twisted_loop)!r}, not uvloop's")
    CommandLineInterface().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()

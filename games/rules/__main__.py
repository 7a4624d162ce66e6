"""``python -m games.rules COMMAND < request.json > answer.json`` (ENGINE_CLI.md).

Bad input never produces a traceback: exit status 2, nothing on stdout, one line of JSON on
stderr with an error code and a message.
"""

from __future__ import annotations

import json
import sys

from .api import COMMANDS, error_json, handle
from .errors import BadInputError, RulesError

USAGE = f"usage: python -m games.rules {{{'|'.join(COMMANDS)}}} < request.json"


def _fail(code: str, message: str) -> int:
    sys.stderr.write(json.dumps({"error": {"code": code, "message": message}}) + "\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in COMMANDS:
        name = args[0] if args else ""
        return _fail("unknown_command", f"unknown command {name!r}; {USAGE}")
    try:
        raw = sys.stdin.buffer.read()
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadInputError(f"request is not valid JSON: {exc}") from None
        answer = handle(args[0], request)
    except RulesError as exc:
        sys.stderr.write(json.dumps(error_json(exc), ensure_ascii=False) + "\n")
        return 2
    except RecursionError:
        return _fail("bad_json", "request is nested too deeply")
    sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

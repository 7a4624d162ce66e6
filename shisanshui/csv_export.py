"""Streaming CSV downloads shared by the admin exports (ledger entries, rounds)."""

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from django.http import StreamingHttpResponse


def csv_text(value: str) -> str:
    """Text a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


class _Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


def streamed_csv(rows: Iterable[tuple[Any, ...]], filename: str) -> StreamingHttpResponse:
    """A CSV attachment written row by row, with a byte-order mark so that spreadsheet
    programs read the (Chinese) usernames as UTF-8."""
    writer = csv.writer(_Echo())
    lines = (writer.writerow(row) for row in rows)
    response = StreamingHttpResponse(_with_bom(lines), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _with_bom(lines: Iterator[str]) -> Iterator[str]:
    yield "\ufeff"
    yield from lines

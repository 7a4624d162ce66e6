"""The flow graph of a collusion ring, drawn on the server as SVG (no script, no library): the
accounts are nodes on a circle, each flagged pair an arrow loser -> winner labelled with its
coins, water given away and rounds of evidence. The admin shows the same as a table for
screen readers (the SVG is a labelled image)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

WIDTH = 560
HEIGHT = 420
NODE_RADIUS = 26


@dataclass(frozen=True)
class Node:
    user_id: int
    name: str
    frozen: bool = False
    current: bool = False  # one of the flag being read


@dataclass(frozen=True)
class Arrow:
    loser: int
    winner: int
    coins: int
    water: int
    rounds: int
    current: bool = False
    open: bool = True


def _positions(nodes: list[Node]) -> dict[int, tuple[float, float]]:
    cx, cy = WIDTH / 2, HEIGHT / 2
    radius = min(WIDTH, HEIGHT) / 2 - NODE_RADIUS - 40
    count = len(nodes)
    out = {}
    for i, node in enumerate(nodes):
        angle = math.pi + 2 * math.pi * i / max(count, 1)  # the first on the left
        out[node.user_id] = (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
    return out


def ring_svg(nodes: list[Node], arrows: list[Arrow], *, title: str) -> SafeString:
    """The graph as an inline <svg> (every text escaped)."""
    where = _positions(nodes)
    pairs = {(a.loser, a.winner) for a in arrows}
    parts = [
        format_html(
            '<svg xmlns="http://www.w3.org/2000/svg" class="collusion-ring" role="img" '
            'aria-labelledby="ring-title" viewBox="0 0 {} {}" width="{}" height="{}">'
            '<title id="ring-title">{}</title>'
            '<defs><marker id="ring-arrow" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
            '<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>',
            WIDTH,
            HEIGHT,
            WIDTH,
            HEIGHT,
            title,
        )
    ]
    for arrow in arrows:
        if arrow.loser not in where or arrow.winner not in where:
            continue
        (x1, y1), (x2, y2) = where[arrow.loser], where[arrow.winner]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        # Both directions flagged: each arrow keeps to its own side.
        shift = 10 if (arrow.winner, arrow.loser) in pairs else 0
        nx, ny = -uy * shift, ux * shift
        sx, sy = x1 + ux * NODE_RADIUS + nx, y1 + uy * NODE_RADIUS + ny
        ex, ey = x2 - ux * (NODE_RADIUS + 2) + nx, y2 - uy * (NODE_RADIUS + 2) + ny
        colour = "#b00020" if arrow.current else ("#555" if arrow.open else "#aaa")
        label = gettext("%(coins)s coins · %(water)s water · %(rounds)s rounds") % {
            "coins": f"{arrow.coins:,}",
            "water": arrow.water,
            "rounds": arrow.rounds,
        }
        mx, my = (sx + ex) / 2 + nx * 1.6, (sy + ey) / 2 + ny * 1.6 - 6
        parts.append(
            format_html(
                '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}" '
                'marker-end="url(#ring-arrow)"{}/>'
                '<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="{}">{}</text>',
                f"{sx:.1f}",
                f"{sy:.1f}",
                f"{ex:.1f}",
                f"{ey:.1f}",
                colour,
                3 if arrow.current else 2,
                mark_safe(' stroke-dasharray="6 4"') if not arrow.open else "",
                f"{mx:.1f}",
                f"{my:.1f}",
                colour,
                label,
            )
        )
    for node in nodes:
        x, y = where[node.user_id]
        parts.append(
            format_html(
                '<g><circle cx="{}" cy="{}" r="{}" fill="{}" stroke="{}" stroke-width="2"/>'
                '<text x="{}" y="{}" font-size="13" text-anchor="middle">{}</text></g>',
                f"{x:.1f}",
                f"{y:.1f}",
                NODE_RADIUS,
                "#e3f2fd" if node.current else "#f5f5f5",
                "#0d47a1" if node.frozen else "#333",
                f"{x:.1f}",
                f"{y + NODE_RADIUS + 16:.1f}",
                node.name + (" ❄" if node.frozen else ""),
            )
        )
    parts.append(mark_safe("</svg>"))
    return mark_safe("".join(str(p) for p in parts))

#!/usr/bin/env python3
"""Write the installable app's icons (static/app/*.png): a fan of three cards on the felt
green of the site's icon (static/favicon.svg), drawn here with numpy from signed distances
(anti-aliased edges, no image library) and written as plain RGBA PNGs.

    python3 scripts/make-app-icons.py

- icon-192.png, icon-512.png: "any" purpose, a rounded square like the favicon;
- icon-maskable-512.png: "maskable", full bleed, the cards inside the central safe circle
  (radius 40 % of the size) that every platform's mask keeps;
- apple-touch-icon.png (180 px): full bleed, iOS rounds the corners itself.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "static" / "app"

FELT = (15, 81, 50)  # #0f5132, the favicon's green
CARD = (255, 253, 245)  # #fffdf5
GOLD = (201, 143, 29)  # #c98f1d
RED = (179, 38, 30)  # #b3261e, the site's accent
Array = np.ndarray


class Canvas:
    """An RGBA float image in 0..1, drawn on with coverage masks (0..1 per pixel)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rgba = np.zeros((size, size, 4))
        # Pixel centres in units of the icon (0..1), y downwards.
        centres = (np.arange(size) + 0.5) / size
        self.x, self.y = np.meshgrid(centres, centres)
        self.pixel = 1.0 / size

    def coverage(self, distance: Array) -> Array:
        """Anti-aliased inside-ness of a signed distance (negative inside, in icon units)."""
        return np.clip(0.5 - distance / self.pixel, 0.0, 1.0)

    def paint(self, colour: tuple[int, int, int], cover: Array) -> None:
        """Source-over compositing of an opaque colour with this coverage."""
        rgb = np.array(colour) / 255.0
        alpha = cover[..., None]
        self.rgba[..., :3] = rgb * alpha + self.rgba[..., :3] * (1 - alpha)
        self.rgba[..., 3] = cover + self.rgba[..., 3] * (1 - cover)

    def png(self) -> bytes:
        pixels = np.round(self.rgba * 255).astype(np.uint8)
        raw = b"".join(b"\x00" + row.tobytes() for row in pixels)

        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.size, self.size, 8, 6, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def rounded_box(
    x: Array, y: Array, centre: tuple[float, float], half: tuple[float, float], radius: float
) -> Array:
    """Signed distance to an axis-aligned rounded rectangle."""
    qx = np.abs(x - centre[0]) - (half[0] - radius)
    qy = np.abs(y - centre[1]) - (half[1] - radius)
    outside = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0))
    inside = np.minimum(np.maximum(qx, qy), 0)
    return outside + inside - radius


Point = tuple[float, float]


def segment(x: Array, y: Array, a: Point, b: Point, width: float) -> Array:
    """Signed distance to a stroke with round caps from a to b."""
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = np.clip(((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy), 0, 1)
    return np.hypot(x - ax - t * dx, y - ay - t * dy) - width / 2


def rotated(x: Array, y: Array, pivot: tuple[float, float], degrees: float) -> tuple[Array, Array]:
    """The coordinates seen from a frame turned by ``degrees`` (clockwise) about ``pivot``."""
    angle = math.radians(-degrees)
    px, py = x - pivot[0], y - pivot[1]
    cos, sin = math.cos(angle), math.sin(angle)
    return px * cos - py * sin + pivot[0], px * sin + py * cos + pivot[1]


def draw(size: int, *, full_bleed: bool, scale: float) -> Canvas:
    """The icon at ``size`` px; ``scale`` shrinks the fan about the centre (the safe zone)."""
    canvas = Canvas(size)
    x, y = canvas.x, canvas.y
    if full_bleed:
        canvas.paint(FELT, np.ones_like(x))
    else:
        canvas.paint(FELT, canvas.coverage(rounded_box(x, y, (0.5, 0.5), (0.47, 0.47), 0.19)))
    # The fan in its own units: shrink about the icon's centre.
    fx, fy = (x - 0.5) / scale + 0.5, (y - 0.5) / scale + 0.5
    pixel = canvas.pixel / scale
    pivot = (0.5, 0.86)  # where a hand holds the cards
    half, radius, border = (0.2, 0.28), 0.045, 0.016
    centre = (0.5, 0.47)
    for degrees in (-22.0, 22.0, 0.0):  # the two behind, then the front card
        cx, cy = rotated(fx, fy, pivot, degrees)
        box = rounded_box(cx, cy, centre, half, radius)
        canvas.paint(GOLD, np.clip(0.5 - box / pixel, 0, 1))
        canvas.paint(CARD, np.clip(0.5 - (box + border) / pixel, 0, 1))
    # The front card's mark: 十 over 三, the favicon's strokes.
    stroke = 0.05
    marks = [
        ((0.5, 0.27), (0.5, 0.45)),
        ((0.39, 0.36), (0.61, 0.36)),
        ((0.39, 0.52), (0.61, 0.52)),
        ((0.41, 0.6), (0.59, 0.6)),
        ((0.37, 0.69), (0.63, 0.69)),
    ]
    ink = np.zeros_like(x)
    for a, b in marks:
        ink = np.maximum(ink, np.clip(0.5 - segment(fx, fy, a, b, stroke) / pixel, 0, 1))
    canvas.paint(RED, ink)
    return canvas


ICONS = {
    "icon-192.png": (192, False, 1.0),
    "icon-512.png": (512, False, 1.0),
    "icon-maskable-512.png": (512, True, 0.78),
    "apple-touch-icon.png": (180, True, 0.9),
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (size, full_bleed, scale) in ICONS.items():
        path = OUT / name
        path.write_bytes(draw(size, full_bleed=full_bleed, scale=scale).png())
        print(f"{path} ({size}x{size}, {path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()

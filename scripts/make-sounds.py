#!/usr/bin/env python3
"""Write the table's sound effects (static/games/sounds/*.wav): synthesised here from sine
waves and noise, so they are ours, small (8-bit mono, 16 kHz) and need no CDN.

    python3 scripts/make-sounds.py
"""

from __future__ import annotations

import math
import random
import wave
from collections.abc import Callable
from pathlib import Path

RATE = 16_000
OUT = Path(__file__).resolve().parent.parent / "static" / "games" / "sounds"


def render(seconds: float, sample: Callable[[float], float]) -> bytes:
    frames = bytearray()
    for i in range(int(seconds * RATE)):
        value = max(-1.0, min(1.0, sample(i / RATE)))
        frames.append(int(128 + 120 * value))
    return bytes(frames)


def tone(freq: float, t: float, decay: float) -> float:
    return math.sin(2 * math.pi * freq * t) * math.exp(-t * decay)


def gun() -> bytes:
    noise = random.Random(13)
    return render(0.45, lambda t: (noise.uniform(-1, 1) * 0.9 + tone(90, t, 0)) * math.exp(-t * 11))


def home_run() -> bytes:
    notes = (523.25, 659.25, 783.99, 1046.5)

    def sample(t: float) -> float:
        k = min(int(t / 0.13), len(notes) - 1)
        local = t - k * 0.13
        return 0.7 * tone(notes[k], local, 4) + 0.3 * tone(notes[k] * 2, local, 6)

    return render(0.9, sample)


def deal() -> bytes:
    noise = random.Random(5)
    return render(0.05, lambda t: noise.uniform(-1, 1) * math.exp(-t * 90) * 0.6)


def settle() -> bytes:
    return render(0.6, lambda t: 0.6 * tone(880, t, 6) + 0.4 * tone(1318.5, t, 7))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in {"gun": gun, "home_run": home_run, "deal": deal, "settle": settle}.items():
        with wave.open(str(OUT / f"{name}.wav"), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(1)
            out.setframerate(RATE)
            out.writeframes(make())
    print("wrote", ", ".join(sorted(p.name for p in OUT.glob("*.wav"))))


if __name__ == "__main__":
    main()

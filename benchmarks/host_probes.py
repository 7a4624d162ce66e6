"""How the machine itself behaves while a load step plays, so its noise is told apart.

The hypervisor's steal, the speed at which the host runs Python just before the step, how late
an idle process wakes from short sleeps (the host's scheduling stalls), and how late this
script's own event loop runs (its own part of the latencies it measures).
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.table_client import percentile

# An idle process on the same machine: sleeps 2 ms at a time and counts how much later than
# asked it woke. At rest that is the host's own scheduling stalls (this VM: 20–50 ms a few
# times a minute); under load, the platform's contention for the cores adds to it.
STALL_PROBE = """
import json, signal, sys, time
stop = False
def finish(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, finish)
worst, over_50, over_100, last = 0.0, 0, 0, time.monotonic()
while not stop:
    time.sleep(0.002)
    now = time.monotonic()
    late = (now - last - 0.002) * 1000
    last = now
    worst = max(worst, late)
    over_50 += late > 50
    over_100 += late > 100
print(json.dumps({"max": round(worst, 1), "over_50": over_50, "over_100": over_100}))
"""


def host_speed_ms(repeats: int = 3) -> float:
    """The CPU-ms this process takes for a fixed piece of pure-Python work (the median of
    ``repeats``), timed just before a step's clients connect, the platform idle: how fast the
    host runs Python at that moment. This VM's speed moves by up to 3x within a day with no
    steal to show for it, and every CPU figure of a step moves with it."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        total = 0
        table: dict[int, int] = {}
        for i in range(300_000):
            total += i * i % 7
            table[i & 1023] = total
        times.append(1000 * (time.process_time() - started))
    return statistics.median(times)


class LoopLag:
    """How late this script's own event loop runs a callback, every ``every`` seconds while
    a step plays: a frame that arrives while the loop is busy with other clients is timed
    that much later than it came, so this is the load script's own part of the latencies."""

    def __init__(self, every: float = 0.01) -> None:
        self.every = every
        self.lags_ms: list[float] = []
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(self.every)
            self.lags_ms.append(1000 * max(0.0, time.monotonic() - asked - self.every))

    def stop(self) -> dict[str, float]:
        self._task.cancel()
        lags = self.lags_ms
        return {
            "p50": round(percentile(lags, 50), 1),
            "p99": round(percentile(lags, 99), 1),
            "max": round(max(lags, default=math.nan), 1),
        }


class StallProbe:
    """``STALL_PROBE`` in a process of its own for the length of a step."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", STALL_PROBE], stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> dict[str, float]:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        try:
            return {k: float(v) for k, v in json.loads(out).items()}
        except ValueError:
            return {}


def steal_share(before: Any, after: Any) -> float:
    """The percentage of all CPU time between two ``psutil.cpu_times()`` that was stolen by
    the hypervisor (0 where the platform does not report steal)."""
    total = sum(after) - sum(before)
    stolen = getattr(after, "steal", 0.0) - getattr(before, "steal", 0.0)
    return 100 * stolen / total if total > 0 else 0.0

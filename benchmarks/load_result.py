"""The figures of one load step: as report lines, as a ramp's table row, and as JSON.

Latency is action → broadcast: a client sends ``ready`` / ``submit`` and the matching public
event reaches each other seat (one process, ``time.monotonic``), as p50/p90/p99/max, and over
the steady window only (``latency_steady_ms``: actions sent after the last client's welcome and
before the first leave, without the storms of every client connecting, or leaving, at once).
``latency_by_action_ms`` splits the samples by what the broadcast carried (a Ready, the Ready
that dealt, a submission, the submission that settled: the last two cost the platform several
times more); ``p99_tail`` says how much of the slowest 1 % was sent in the 3 worst half-seconds
(most: a stall of every table at once; little: the steady load's own tail). The server's RSS
and CPU are per process group; ``cpu_ms_per_round_steady`` counts only the rounds settled in
the steady window, without the connections, welcomes and leaves a step pays once per player.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from benchmarks.table_client import percentile


def rounds_settled_between(
    settled: dict[int, list[dict[int, float]]], start: float, end: float
) -> int:
    """The rounds whose result the first of their table's clients received between ``start``
    and ``end``; ``settled`` is {room: [each client's {round: when its result came}]}."""
    count = 0
    for clients in settled.values():
        first_seen: dict[int, float] = {}
        for client in clients:
            for round_no, at in client.items():
                first_seen[round_no] = min(at, first_seen.get(round_no, math.inf))
        count += sum(1 for at in first_seen.values() if start <= at <= end)
    return count


def tail_windows(
    timed: list[tuple[float, float]], start: float, *, width: float = 0.5, top: int = 3
) -> dict[str, Any]:
    """Where in time the slowest 1 % of the samples were sent: the samples at or over the p99
    (``timed``: (sent at, seconds)), counted in windows of ``width`` seconds from ``start``;
    the ``top`` windows holding most of them, and the share of the tail they hold. A tail
    made in a few windows is a stall (every table slow at once); one spread over the step is
    the steady load's."""
    if not timed:
        return {"samples": 0, "share": math.nan, "windows": []}
    p99 = percentile([s for _at, s in timed], 99)
    slow = [at for at, s in timed if s >= p99]
    counts = Counter(int((at - start) // width) for at in slow)
    worst = counts.most_common(top)
    # How busy those windows were: the actions sent in each (all of them, fast or slow),
    # against the mean of the windows that sent any (the tables' rounds in step make waves).
    sent = Counter(int((at - start) // width) for at, _s in timed)
    return {
        "samples": len(slow),
        "share": sum(n for _w, n in worst) / len(slow),
        "windows": [(round(w * width, 2), n) for w, n in worst],
        "width": width,
        "sent": [sent[w] for w, _n in worst],
        "mean_sent": len(timed) / len(sent),
    }


@dataclass
class Result:
    tables: int
    clients: int
    rounds: int
    seconds: float
    latencies_ms: list[float]
    # The samples of actions sent while every client was playing: after the last welcome,
    # before the first leave (no connection or leave storm in them).
    steady_ms: list[float]
    replies_ms: list[float]
    errors: Counter[str]
    benign: Counter[str]
    reconnects: int
    resyncs: int
    rss_mb: dict[str, float]
    cpu_percent: dict[str, float]
    cpu_ms_per_round: dict[str, float]
    system_cpu_percent: float
    client_cpu_percent: float
    # The share of the machine's CPU time the hypervisor gave to others while this step ran
    # (Linux "steal"; 0 on bare metal): figures taken under steal are not comparable.
    steal_percent: float = 0.0
    # CPU-ms per round over the steady window only (the rounds settled in it): the cost of
    # playing, without the step's connections, welcomes and leaves. Empty when the window
    # held too few samples or no round.
    steady_cpu_ms_per_round: dict[str, float] = field(default_factory=dict)
    steady_rounds: int = 0
    # The connection storm: for every client, from the step's start (all connect at once) to
    # its first welcome (the handshake, the seat, the table's snapshot).
    welcome_ms: list[float] = field(default_factory=list)
    # How late an idle process on the machine woke from 2 ms sleeps during the step
    # (StallProbe): the most in ms, and how many times by over 50 and over 100 ms.
    host_stalls: dict[str, float] = field(default_factory=dict)
    # host_speed_ms() at the step's start (lower is faster).
    host_speed_ms: float = math.nan
    # LoopLag: this script's event loop's lateness during the step, ms (p50, p99, max).
    loop_lag_ms: dict[str, float] = field(default_factory=dict)
    # Tables the autovacuum stand-in vacuumed during the step (None: it did not run).
    vacuums: int | None = None
    # The samples by what the broadcast carried (table_client.ACTION_CLASSES), ms.
    by_class_ms: dict[str, list[float]] = field(default_factory=dict)
    # tail_windows(): where in the step the samples over the p99 were sent.
    tail: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds_per_minute(self) -> float:
        return 60 * self.rounds / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return percentile(self.latencies_ms, q)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def report(self) -> str:
        lat = self.latencies_ms
        rss = " ".join(f"{k}={v:.0f}" for k, v in self.rss_mb.items())
        cpu = " ".join(f"{k}={v:.0f}" for k, v in self.cpu_percent.items())
        per_round = " ".join(f"{k}={v:.1f}" for k, v in self.cpu_ms_per_round.items())
        steady = " ".join(f"{k}={v:.1f}" for k, v in self.steady_cpu_ms_per_round.items())
        return "\n".join(
            [
                f"tables: {self.tables}",
                f"clients: {self.clients}",
                f"rounds: {self.rounds}",
                f"seconds: {self.seconds:.1f}",
                f"rounds_per_minute: {self.rounds_per_minute:.1f}",
                f"latency_ms: p50={self.p(50):.1f} p90={self.p(90):.1f} p99={self.p(99):.1f} "
                f"max={max(lat, default=math.nan):.1f} n={len(lat)}",
                f"latency_steady_ms: p50={percentile(self.steady_ms, 50):.1f} "
                f"p99={percentile(self.steady_ms, 99):.1f} n={len(self.steady_ms)}",
                "latency_by_action_ms: "
                + "; ".join(
                    f"{name} p50={percentile(v, 50):.1f} p99={percentile(v, 99):.1f} n={len(v)}"
                    for name, v in self.by_class_ms.items()
                ),
                self.tail_line(),
                f"reply_ms: p50={percentile(self.replies_ms, 50):.1f} "
                f"p99={percentile(self.replies_ms, 99):.1f} n={len(self.replies_ms)}",
                f"welcome_ms: p50={percentile(self.welcome_ms, 50):.1f} "
                f"p99={percentile(self.welcome_ms, 99):.1f} "
                f"max={max(self.welcome_ms, default=math.nan):.1f} n={len(self.welcome_ms)}",
                f"errors: {self.error_count} {dict(self.errors)}",
                f"benign_refusals: {sum(self.benign.values())} {dict(self.benign)}",
                f"reconnects: {self.reconnects}",
                f"resyncs: {self.resyncs}",
                f"server_rss_mb: {rss} total={sum(self.rss_mb.values()):.0f}",
                f"server_cpu_percent: {cpu} system={self.system_cpu_percent:.0f} "
                f"(this script: {self.client_cpu_percent:.0f}) steal={self.steal_percent:.1f}",
                f"cpu_ms_per_round: {per_round} total={sum(self.cpu_ms_per_round.values()):.1f}",
                f"cpu_ms_per_round_steady: {steady} "
                f"total={sum(self.steady_cpu_ms_per_round.values()):.1f} "
                f"rounds={self.steady_rounds}",
                f"host_stall_ms: max={self.host_stalls.get('max', math.nan):.1f} "
                f"over_50={self.host_stalls.get('over_50', 0):.0f} "
                f"over_100={self.host_stalls.get('over_100', 0):.0f} "
                "(an idle process's 2 ms sleeps, woken late)",
                f"host_speed_ms: {self.host_speed_ms:.1f} (a fixed piece of Python work, "
                "timed before the step; lower is faster)",
                f"client_loop_lag_ms: p50={self.loop_lag_ms.get('p50', math.nan):.1f} "
                f"p99={self.loop_lag_ms.get('p99', math.nan):.1f} "
                f"max={self.loop_lag_ms.get('max', math.nan):.1f} "
                "(this script's own event loop, late by: its part of the latencies)",
                "autovacuum_stand_in: "
                + (
                    "not running (the server's autovacuum, or --autovacuum off)"
                    if self.vacuums is None
                    else f"{self.vacuums} tables vacuumed during the step"
                ),
            ]
        )

    def tail_line(self) -> str:
        tail = self.tail
        if not tail.get("samples"):
            return "p99_tail: no samples"
        where = ", ".join(f"{at:g} s: {n}" for at, n in tail["windows"])
        sent = "/".join(str(n) for n in tail["sent"])
        return (
            f"p99_tail: {tail['samples']} samples at or over the p99; "
            f"{100 * tail['share']:.0f} % of them sent in the {len(tail['windows'])} "
            f"worst {tail['width']:g}-second windows ({where}, from the step's start), "
            f"which sent {sent} samples in all against {tail['mean_sent']:.0f} in a mean window"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "clients": self.clients,
            "rounds": self.rounds,
            "seconds": round(self.seconds, 2),
            "rounds_per_minute": round(self.rounds_per_minute, 2),
            "p50_ms": round(self.p(50), 2),
            "p90_ms": round(self.p(90), 2),
            "p99_ms": round(self.p(99), 2),
            "max_ms": round(max(self.latencies_ms, default=math.nan), 2),
            "p99_steady_ms": round(percentile(self.steady_ms, 99), 2),
            "welcome_p50_ms": round(percentile(self.welcome_ms, 50), 2),
            "welcome_p99_ms": round(percentile(self.welcome_ms, 99), 2),
            "steady_samples": len(self.steady_ms),
            "by_action": {
                name: {
                    "p50_ms": round(percentile(v, 50), 2),
                    "p99_ms": round(percentile(v, 99), 2),
                    "samples": len(v),
                }
                for name, v in self.by_class_ms.items()
            },
            "tail": self.tail,
            "samples": len(self.latencies_ms),
            "errors": self.error_count,
            "rss_mb": {k: round(v, 1) for k, v in self.rss_mb.items()},
            "cpu_percent": {k: round(v, 1) for k, v in self.cpu_percent.items()},
            "cpu_ms_per_round": {k: round(v, 2) for k, v in self.cpu_ms_per_round.items()},
            "client_cpu_percent": round(self.client_cpu_percent, 1),
            "system_cpu_percent": round(self.system_cpu_percent, 1),
            "steal_percent": round(self.steal_percent, 1),
            "steady_cpu_ms_per_round": {
                k: round(v, 2) for k, v in self.steady_cpu_ms_per_round.items()
            },
            "steady_rounds": self.steady_rounds,
            "host_stalls": self.host_stalls,
            "host_speed_ms": round(self.host_speed_ms, 1),
            "vacuums": self.vacuums,
            "client_loop_lag_ms": self.loop_lag_ms,
        }


RAMP_HEADER = (
    f"{'tables':>6} {'clients':>7} {'rounds':>6} {'rnd/min':>8} {'p50 ms':>7} {'p90 ms':>7} "
    f"{'p99 ms':>7} {'max ms':>7} {'p99 st':>7} {'errors':>6} {'rss MB':>7} {'cpu %':>6} "
    f"{'steal %':>7} {'stall':>6} {'speed':>6}"
)


def ramp_row(r: Result) -> str:
    return (
        f"{r.tables:>6} {r.clients:>7} {r.rounds:>6} {r.rounds_per_minute:>8.1f} "
        f"{r.p(50):>7.1f} {r.p(90):>7.1f} {r.p(99):>7.1f} "
        f"{max(r.latencies_ms, default=math.nan):>7.1f} {percentile(r.steady_ms, 99):>7.1f} "
        f"{r.error_count:>6} "
        f"{sum(r.rss_mb.values()):>7.0f} {sum(r.cpu_percent.values()):>6.0f} "
        f"{r.steal_percent:>7.1f} {r.host_stalls.get('max', math.nan):>6.0f} "
        f"{r.host_speed_ms:>6.0f}"
    )

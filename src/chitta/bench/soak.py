"""`chitta bench soak`: a long mixed hostile load against a real daemon, and what it did.

One `chitta serve` (with a file-descriptor limit, 1024 by default as on most machines) gets,
for ``duration_s`` seconds, valid mixed requests from several client threads (each
acknowledged write recorded) and, at the same time, malformed frames, connection floods, slow
clients, partial clients and oversized requests (bench/hostile.py). The run has phases:

1. ``kills`` (the first 30 %): all of that, and SIGKILL of the daemon at random moments, each
   followed by a restart;
2. ``warm`` (10 %): the daemon is killed and restarted once more, then only the valid clients
   run: the daemon's steady-state resident memory is the median over this phase's second half;
3. ``hostile`` (60 %): all of the load again, no kills: the peak is measured here;
4. ``quiet`` (``quiet_s`` more seconds): no requests at all; then the resident memory
   "after quiet" is read, one normal request is made, the daemon is stopped and every
   acknowledged write is looked up in the store file.

A daemon that exits by itself (a crash) is counted with its exit code and restarted. The
resident memory, threads and open files are sampled from /proc every ``sample_s``.
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chitta.bench import hostile
from chitta.bench.fault import Served
from chitta.config import Settings
from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient
from chitta.errors import BadArgument, ChittaError

PHASES = ("kills", "warm", "hostile")
SHARES = {"kills": 0.3, "warm": 0.1, "hostile": 0.6}
#: Phases in which the hostile clients run.
HOSTILE = ("kills", "hostile")


@dataclass(frozen=True, slots=True)
class SoakSettings:
    duration_s: float = 300.0
    quiet_s: float = 30.0
    clients: int = 4
    #: Connections each flood opens (over ``nofile``: a daemon without a cap runs out).
    flood: int = 1200
    #: The daemon's RLIMIT_NOFILE (soft and hard).
    nofile: int = 1024
    #: Slow clients held open at a time.
    slow: int = 50
    #: Seconds between kills in the kills phase (uniform in this range).
    kill_every_s: tuple[float, float] = (5.0, 20.0)
    #: Seconds between samples of /proc (None: a second, finer for runs under 200 s).
    sample_s: float | None = None
    seed: int = 0

    @property
    def every_s(self) -> float:
        return self.sample_s or min(1.0, max(0.1, self.duration_s / 200))

    def check(self) -> None:
        if self.duration_s <= 0 or self.quiet_s < 0:
            raise BadArgument("--duration must be above 0 and --quiet at least 0")
        if self.clients < 1 or self.flood < 0 or self.slow < 0 or self.nofile < 64:
            raise BadArgument("--clients must be at least 1, --flood and --slow at least 0, "
                              "--nofile at least 64")  # fmt: skip


class Soak:
    """One run: the daemon, its supervisor, the clients and the figures they gather."""

    def __init__(self, workdir: Path, settings: SoakSettings,
                 tick: Callable[[str], None] = lambda _: None) -> None:  # fmt: skip
        self.s = settings
        self.tick = tick
        self.home = workdir / "home"
        self.daemon = Served(self.home, nofile=settings.nofile, log=workdir / "serve.log")
        self.sock = Settings(home=self.home).socket_path
        self.acks = hostile.Acks()
        self.tallies = {k: hostile.Tally() for k in
                        ("valid", "frames", "flood", "slow", "partial", "oversized")}  # fmt: skip
        self.samples: list[list[Any]] = []
        self.crashes: list[dict[str, Any]] = []
        self.kills = 0
        self.phase = "start"
        self._started = 0.0
        self._restart = threading.Lock()  # one restart at a time (a kill or after a crash)
        self._done = threading.Event()  # the load is over (quiet phase or the end)
        self._end = threading.Event()  # the run is over: the sampler stops

    # --- the daemon -------------------------------------------------------------------------

    def _t(self) -> float:
        return round(time.monotonic() - self._started, 2)

    def kill_and_restart(self) -> None:
        with self._restart:
            self.daemon.kill9()
            self.kills += 1
            self._start("restart after SIGKILL")
        self.tick(f"{self._t():.0f} s: killed the daemon with SIGKILL and restarted it")

    def _start(self, why: str) -> None:
        """Start the daemon; a start that fails is recorded (the supervisor tries again)."""
        try:
            self.daemon.start()
        except RuntimeError as exc:
            self.crashes.append({"t_s": self._t(), "phase": self.phase, "exit_code": None,
                                 "last_line": f"{why} failed: {str(exc)[-200:]}"})  # fmt: skip
            self.tick(f"{self._t():.0f} s: {why} failed: {exc}")
            self._end.wait(1.0)

    def _supervise(self) -> None:
        """Restart a daemon that exited by itself, recording how it ended."""
        while not self._end.wait(0.2):
            with self._restart:
                if self.daemon.alive():
                    continue
                code = self.daemon.returncode()
                last = (self.daemon.said(400).splitlines() or ["(no output)"])[-1]
                self.crashes.append({"t_s": self._t(), "phase": self.phase,
                                     "exit_code": code, "last_line": last[:200]})  # fmt: skip
                self.tick(f"{self._t():.0f} s: the daemon exited by itself ({code}): {last}")
                if not self._end.is_set():
                    self._start("restart after a crash")

    def _sample(self) -> None:
        while not self._end.is_set():
            figures = self.daemon.figures()
            if figures is not None:
                self.samples.append([self._t(), self.phase, self.daemon.pid,
                                     round(figures.rss_kb / 1024, 1), figures.threads,
                                     figures.open_fds])  # fmt: skip
            self._end.wait(self.s.every_s)

    # --- the load ---------------------------------------------------------------------------

    def _loop(self, body: Callable[[], None], pause: Callable[[], float],
              phases: tuple[str, ...] = HOSTILE) -> Callable[[], None]:  # fmt: skip
        def run() -> None:
            while not self._done.is_set():
                if self.phase in phases:
                    body()
                self._done.wait(pause())

        return run

    def _threads(self) -> list[threading.Thread]:
        rng = random.Random(self.s.seed)
        seeds = [rng.randrange(2**32) for _ in range(self.s.clients + 6)]
        out = []
        for n in range(self.s.clients):
            client = hostile.MixedClient(self.sock, f"c{n}", random.Random(seeds[n]), self.acks,
                                         self.tallies["valid"])  # fmt: skip
            r = random.Random(seeds[n] + 1)
            out.append(self._loop(client.step, lambda r=r: r.uniform(0, 0.05),
                                  ("kills", "warm", "hostile")))  # fmt: skip
        r = [random.Random(x) for x in seeds[self.s.clients :]]
        t = self.tallies
        out += [
            self._loop(lambda: hostile.send_malformed(self.sock, r[0], t["frames"]),
                       lambda: r[0].uniform(0.05, 0.2)),
            self._loop(self._flood_once(r[1]), lambda: r[1].uniform(2, 5)),
            self._loop(self._slow_once(r[2]), lambda: r[2].uniform(1, 3)),
            self._loop(lambda: hostile.partial(self.sock, r[3], t["partial"]),
                       lambda: r[3].uniform(0.02, 0.1)),
            self._loop(lambda: hostile.oversized(self.sock, r[4], protocol.MAX_REQUEST_BYTES,
                                                 t["oversized"]),
                       lambda: r[4].uniform(1, 3)),
            self._killer(r[5]),
        ]  # fmt: skip
        return [threading.Thread(target=f, daemon=True) for f in out]

    def _flood_once(self, rng: random.Random) -> Callable[[], None]:
        def once() -> None:
            held = hostile.flood(self.sock, self.s.flood, self.tallies["flood"])
            self._done.wait(rng.uniform(2, 5))
            hostile.close_all(held)

        return once

    def _slow_once(self, rng: random.Random) -> Callable[[], None]:
        def once() -> None:
            tally = self.tallies["slow"]
            pid = self.daemon.pid
            held = hostile.slow(self.sock, rng, self.s.slow, tally)
            self._done.wait(rng.uniform(30, 90))  # past a 60 s idle cut-off, some
            # Those a kill ended are not the daemon's doing.
            ended = "closed_by_daemon" if self.daemon.pid == pid else "ended_by_a_restart"
            tally.add(ended, hostile.closed_by_peer(held))
            hostile.close_all(held)

        return once

    def _killer(self, rng: random.Random) -> Callable[[], None]:
        def run() -> None:
            while not self._done.is_set():
                if self._done.wait(rng.uniform(*self.s.kill_every_s)):
                    return
                if self.phase == "kills":
                    self.kill_and_restart()

        return run

    # --- the run ----------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        self.s.check()
        self.daemon.start()
        self._started = time.monotonic()
        watchers = [threading.Thread(target=f, daemon=True) for f in (self._supervise,
                                                                      self._sample)]  # fmt: skip
        load = self._threads()
        for t in watchers + load:
            t.start()
        try:
            for phase in PHASES:
                self.phase = phase
                self.tick(f"{self._t():.0f} s: phase {phase}")
                if phase == "warm":
                    self.kill_and_restart()  # a fresh daemon whose steady state is measured
                time.sleep(self.s.duration_s * SHARES[phase])
            end_of_load = self.daemon.figures()
            self.phase = "quiet"
            self.tick(f"{self._t():.0f} s: quiet for {self.s.quiet_s:g} s")
            self._done.set()
            for t in load:
                t.join(timeout=120)
            time.sleep(self.s.quiet_s)
            served_after = self._served()
        finally:
            self._done.set()
            self._end.set()
            for t in watchers:
                t.join(timeout=120)
            self.daemon.stop()
        lost = hostile.lost_writes(Settings(home=self.home).store_path, self.acks)
        return self._figures(end_of_load, served_after, lost)

    def _served(self) -> bool:
        try:
            with DaemonClient(self.sock, timeout_s=30) as client:
                return bool(client.call("memory_status")["ok"])
        except (ChittaError, OSError):
            return False

    def _figures(self, end_of_load: Any, served_after: bool, lost: dict[str, int]
                 ) -> dict[str, Any]:  # fmt: skip
        tallies = {k: v.as_dict() for k, v in self.tallies.items()}
        valid = tallies["valid"]
        return {
            "settings": {
                **asdict(self.s),
                "kill_every_s": list(self.s.kill_every_s),
                "phases": {p: round(self.s.duration_s * SHARES[p], 1) for p in PHASES},
            },
            "requests": {
                "valid_served": sum(n for k, n in valid.items() if k.endswith(":ok")),
                "valid_failed": sum(n for k, n in valid.items() if not k.endswith(":ok")),
                "malformed_answered": sum(
                    n for k, n in tallies["frames"].items() if k.startswith("code:")
                ),
                "internal_errors": hostile.internal_error_count(tallies),
                "by_client": tallies,
            },
            "daemon": {
                "kills": self.kills,
                "crashes": len(self.crashes),
                "crash_log": self.crashes,
                "served_after_quiet": served_after,
            },
            "acknowledged": {
                "memories": len(self.acks.remembered),
                "forgets": len(self.acks.forgotten),
                "triplets": len(self.acks.triplets),
                "writes": self.acks.writes,
                "lost": lost,
                "lost_total": sum(lost.values()),
            },
            "rss": rss_summary(self.samples, end_of_load),
        }


def rss_summary(samples: list[list[Any]], end_of_load: Any) -> dict[str, Any]:
    """Steady state (median of the warm phase's second half), peak (hostile phase), at the
    end of the load and after the quiet phase (median of its last three samples), in MB."""
    by_phase: dict[str, list[list[Any]]] = {}
    for sample in samples:
        by_phase.setdefault(sample[1], []).append(sample)
    warm = by_phase.get("warm", [])
    steady_rows = warm[len(warm) // 2 :] or warm
    hostile_rows = by_phase.get("hostile", [])
    quiet = by_phase.get("quiet", [])[-3:]

    def median(rows: list[list[Any]], col: int) -> float | None:
        return round(statistics.median(r[col] for r in rows), 1) if rows else None

    steady, after = median(steady_rows, 3), median(quiet, 3)
    return {
        # Processes the hostile phase saw (more than one: the daemon crashed and restarted),
        # and whether "after quiet" is still the daemon whose steady state was measured.
        "hostile_daemons": len({r[2] for r in hostile_rows}),
        "same_daemon_after_quiet": bool(quiet and steady_rows)
        and quiet[-1][2] == steady_rows[-1][2],
        "steady_mb": steady,
        "peak_mb": max((r[3] for r in hostile_rows), default=None),
        "end_of_load_mb": round(end_of_load.rss_kb / 1024, 1) if end_of_load else None,
        "after_quiet_mb": after,
        "after_quiet_over_steady": round(after / steady, 2) if steady and after else None,
        "threads": {
            "steady": median(steady_rows, 4),
            "peak": max((r[4] for r in hostile_rows), default=None),
            "after_quiet": median(quiet, 4),
        },
        "open_fds": {
            "steady": median(steady_rows, 5),
            "peak": max((r[5] for r in hostile_rows), default=None),
            "after_quiet": median(quiet, 5),
        },
        "columns": ["t_s", "phase", "pid", "rss_mb", "threads", "open_fds"],
        "samples": samples,
    }


def markdown(record: dict[str, Any]) -> str:
    """The summary table docs/benchmarks.md quotes."""
    req, daemon, acked, rss = (record["requests"], record["daemon"], record["acknowledged"],
                               record["rss"])  # fmt: skip
    by = req["by_client"]
    s = record["settings"]
    load = record["machine"].get("loadavg_before"), record["machine"].get("loadavg")

    def ld(v: list[float] | None) -> str:
        return " / ".join(f"{x:.2f}" for x in v) if v else "?"

    head = (f"`{record['command']}` at commit `{(record['commit'] or '?')[:12]}`: "
            f"{s['duration_s']:g} s of load + {s['quiet_s']:g} s quiet, {s['clients']} valid "
            f"clients, floods of {s['flood']} connections against a daemon limited to "
            f"{s['nofile']} open files, {s['slow']} slow clients at a time; load average "
            f"{ld(load[0])} before, {ld(load[1])} after.\n\n")  # fmt: skip
    flood, slow, frames = by["flood"], by["slow"], by["frames"]
    codes = _top(frames, lambda k: k.startswith("code:"), n=8).replace("code:", "")
    unsent = sum(n for k, n in frames.items() if k.startswith(("os:", "closed", "busy")))
    restarted = "" if rss["same_daemon_after_quiet"] else ", a daemon restarted after a crash"
    rows = [
        ("valid requests served / failed", f"{req['valid_served']:,} / {req['valid_failed']:,}"),
        ("valid failures by kind", _top(by["valid"], lambda k: not k.endswith(":ok"))),
        ("malformed frames answered, by code", f"{req['malformed_answered']:,} ({codes})"),
        ("malformed frames: unexpected code / batches undelivered (no daemon, or busy)",
         f"{sum(n for k, n in frames.items() if k.startswith('unexpected'))} / {unsent}"),
        ("internal errors (-32603), any client", f"{req['internal_errors']:,}"),
        ("flood connections opened / failed", f"{flood.get('opened', 0):,} / "
         f"{sum(n for k, n in flood.items() if k.startswith('failed'))}"),
        ("slow clients opened / closed by the daemon / ended by a crash or kill",
         f"{slow.get('opened', 0):,} / {slow.get('closed_by_daemon', 0):,} / "
         f"{slow.get('ended_by_a_restart', 0):,}"),
        ("oversized requests", _top(by["oversized"], lambda k: True)),
        ("daemon kills (SIGKILL) / crashes (exited by itself)",
         f"{daemon['kills']} / {daemon['crashes']}"),
        ("daemon processes during the hostile phase", str(rss["hostile_daemons"])),
        ("acknowledged writes / lost", f"{acked['writes']:,} / {acked['lost_total']}"),
        ("RSS steady / peak / end of load / after quiet, MB",
         " / ".join(_or_dash(rss[k]) for k in ("steady_mb", "peak_mb", "end_of_load_mb",
                                              "after_quiet_mb"))
         + f" (×{_or_dash(rss['after_quiet_over_steady'])}{restarted})"),
        ("threads steady / peak / after quiet", " / ".join(
            _or_dash(rss["threads"][k]) for k in ("steady", "peak", "after_quiet"))),
        ("open files steady / peak / after quiet", " / ".join(
            _or_dash(rss["open_fds"][k]) for k in ("steady", "peak", "after_quiet"))),
        ("a normal request served after the quiet phase",
         "yes" if daemon["served_after_quiet"] else "**no**"),
    ]  # fmt: skip
    table = "| figure | value |\n|---|---|\n" + "".join(f"| {a} | {b} |\n" for a, b in rows)
    return head + table


def _top(counts: dict[str, int], keep: Callable[[str], bool], n: int = 6) -> str:
    chosen = sorted(((v, k) for k, v in counts.items() if keep(k)), reverse=True)[:n]
    return ", ".join(f"{k} {v:,}" for v, k in chosen) or "none"


def _or_dash(value: object) -> str:
    """A figure, or "–" where there was none (no daemon was up to measure)."""
    return "–" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

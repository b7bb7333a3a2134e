"""This chitta store as a cited recall source (kind ``chitta``).

Each configured realm is recalled (``record=False``: asking for a cited answer teaches the
store nothing) and passed through the admission gate the MCP recall gateway applies
(recall/confidence/gate.py ``gate_reply``): under the UNKNOWN band only rows sharing a
distinctive word with the query are kept, so a question the store cannot answer brings back
nothing and cited recall can abstain honestly. The realms' admitted rows are merged by their score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chitta.cited.base import Chunk, SourceError
from chitta.cited.settings import DEFAULT_PRIORITY
from chitta.config import DEFAULT_REALM
from chitta.errors import ChittaError
from chitta.recall.confidence.gate import GateSettings, gate_reply

if TYPE_CHECKING:
    from chitta.api import Chitta


def recall_reply(chitta: Chitta, query: str, realm: str, limit: int, strategy: str) -> dict:
    """An in-process recall in the daemon's JSON shape (``ok`` and wire.py's fields),
    recording no access history."""
    from chitta.wire import result_to_dict  # rich: loaded only when a store is asked

    result = chitta.recall(query, realm=realm, limit=limit, strategy=strategy, record=False)
    return {"ok": True, **result_to_dict(result)}


def admitted_rows(
    reply: dict[str, Any], *, realm: str, limit: int, strategy: str, gate: GateSettings
) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of one realm's recall reply that the gateway's gate admits, and the band."""
    if not isinstance(reply.get("hits"), list) or not reply.get("ok"):
        raise SourceError(f"the recall of realm {realm!r} answered no hits list")
    gated = gate_reply(reply, realm=realm, default_realm=DEFAULT_REALM, limit=limit,
                       strategy=strategy, settings=gate)  # fmt: skip
    return gated["hits"], gated["gate"]["band"]


def row_score(row: dict[str, Any]) -> float:
    """The store's own score of a row: the reranker's when it ran, else the final score after
    the scoring stage, else the fused score."""
    factors = row.get("factors") or {}
    if isinstance(factors.get("rerank"), int | float):
        return float(factors["rerank"])
    final = row.get("final")
    return float(final if isinstance(final, int | float) else row.get("score", 0.0))


def chunks_of(
    name: str, realms: Sequence[tuple[list[dict[str, Any]], str | None]], limit: int
) -> list[Chunk]:
    """Every realm's admitted rows merged by score (ties keep realm order, then rank), the
    best ``limit`` as chunks ranked from 1."""
    rows = [(row, band) for hits, band in realms for row in hits]
    rows.sort(key=lambda pair: -row_score(pair[0]))  # stable: ties keep their order
    out = []
    for rank, (row, band) in enumerate(rows[:limit], start=1):
        meta = {"realm": row.get("realm"), "kind": row.get("kind"), "band": band,
                "admitted": row.get("admitted"), "lanes": row.get("reason")}  # fmt: skip
        out.append(Chunk(source=name, text=str(row.get("content", "")), rank=rank,
                         score=round(row_score(row), 6), ref=row.get("id"), meta=meta))  # fmt: skip
    return out


class ChittaStoreSource:
    """The open chitta store: its ``realms`` (default: the default realm) by ``strategy``."""

    kind = "chitta"

    def __init__(
        self,
        name: str,
        chitta: Chitta | None,
        *,
        realms: Sequence[str] = (DEFAULT_REALM,),
        strategy: str = "hybrid",
        priority: float = DEFAULT_PRIORITY["chitta"],
    ) -> None:
        self.name = name
        self.priority = priority
        self.chitta = chitta  # None: no store is open in this process (search says so)
        self.realms = tuple(realms) or (DEFAULT_REALM,)
        self.strategy = strategy

    def search(self, query: str, limit: int) -> list[Chunk]:
        if self.chitta is None:
            raise SourceError("no chitta store is open in this process")
        gate = self.chitta.gate
        realms = []
        for realm in self.realms:
            try:
                reply = recall_reply(self.chitta, query, realm, limit, self.strategy)
            except ChittaError as exc:
                raise SourceError(f"recall in realm {realm!r} failed: {exc}") from exc
            realms.append(
                admitted_rows(reply, realm=realm, limit=limit, strategy=self.strategy, gate=gate)
            )
        return chunks_of(self.name, realms, limit)

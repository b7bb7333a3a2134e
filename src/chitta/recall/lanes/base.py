"""What every lane receives and returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from chitta.store.records import Scope

if TYPE_CHECKING:
    from chitta.store.sqlite import Store


@dataclass(frozen=True, slots=True)
class LaneContext:
    """One recall's inputs, shared by its lanes."""

    query: str
    terms: tuple[str, ...]  # keyword terms: the query's distinctive words
    query_vector: np.ndarray | None  # the embedding of the query's distinctive text
    scope: Scope
    depth: int  # how many candidates each lane returns at most
    store: Store


class Lane(Protocol):
    """A way of finding candidates; returns (memory id, raw score), best first."""

    name: str

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]: ...

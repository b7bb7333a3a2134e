"""What a recall's assessment stage reads of the store, asked for in one call.

After the ranking, the confidence (the maximum relevance: the vectors of the first fused
candidates) and the admission gate (which of the turn's distinctive words each hit holds, and
the statistics the keyword lane scored by) read the store; :meth:`Store.assessment_reads`
answers all three from one request, on PostgreSQL from one snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, slots=True)
class AssessmentRequest:
    """The three reads: ``vectors`` by id; which of ``terms`` each of ``holders`` holds, as
    keyword search matches them; and, unless ``frequencies`` is None, the statistics keyword
    search scores ``realm`` with for those terms."""

    realm: str
    vectors: Sequence[str] = ()
    terms: Sequence[str] = ()
    holders: Sequence[str] = ()
    frequencies: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class AssessmentReads:
    """The answers: the vectors found, the terms each holder holds (holders with none left
    out), and the realm's live memories and each term's document frequency (None and empty
    when no frequencies were asked for)."""

    vectors: Mapping[str, np.ndarray] = field(default_factory=lambda: MappingProxyType({}))
    matches: Mapping[str, set[str]] = field(default_factory=lambda: MappingProxyType({}))
    size: int | None = None
    df: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

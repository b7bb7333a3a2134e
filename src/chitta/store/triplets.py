"""Triplets, the realm's temporal knowledge graph (seed 001, TripletEntry): what every backend
shares — the keys names are matched by, the bounds of a read, the record of a row.

Names are stored as written and matched by key: ``entity_key`` folds case, spaces and trailing
punctuation (the form store/entities.py gives the entities it finds in memories, so a triplet's
ends meet the memories that name them); ``predicate_key`` also reads spaces and hyphens as
``_``, so ``Lives In``, ``lives-in`` and ``lives_in`` are one predicate. An alias maps one
entity key to another in a realm; aliases are resolved when a name is looked up, so adding one
later joins the edges already stored under either name.

An edge is current at time ``t`` when ``valid_from <= t`` and it was not invalidated at or
before ``t``; invalidated edges stay in the table for history (``as_of``).

Reads that follow one node's edges are bounded (``cap`` rows per node and predicate, heaviest
first), so a hub with 100,000 edges costs what ``cap`` costs; the caller is told when a bound
cut the read. The SQL of the SQLite backend is store/sqlite/triplets.py.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chitta.store.entities import normalise
from chitta.store.records import Triplet

#: Seed 001's predicates; any other predicate is accepted too.
SEED_PREDICATES = ("calls", "contains", "imports", "inherits", "corrects", "relates_to")
#: Rows a bounded read looks at per node, as a multiple of the rows it may return.
SCAN_FACTOR = 4
#: Edges read per node and side when the graph lane follows a node's triplets.
NEIGHBOUR_CAP = 200
#: Distinct predicates of one node that ``out_predicates`` looks at, at most.
PREDICATES_SEEN = 200
#: The newest edges with a source that ``hubs`` counts (attractors' triplet clusters).
HUB_WINDOW = 20_000
_PREDICATE_SEPARATORS = re.compile(r"[\s\-_]+")
#: A triplet record's columns, in the order of its fields.
COLUMNS = (
    "id, realm, subject, predicate, object, weight, valid_from, invalidated_at, source_memory, "
    "created_at"
)


def entity_key(name: str) -> str:
    """The key an entity name is matched by: Unicode-folded (NFKC), lower case, single
    spaces, no trailing punctuation."""
    return normalise(unicodedata.normalize("NFKC", name))


def predicate_key(name: str) -> str:
    """The key a predicate is matched by: an entity key with spaces and hyphens as ``_``."""
    return _PREDICATE_SEPARATORS.sub("_", entity_key(name)).strip("_")


@dataclass(frozen=True, slots=True)
class Bounded:
    """Rows a bounded read returned, and whether the bound cut any; ``keys`` holds each row's
    (subject, predicate, object) keys where the read returns them."""

    rows: tuple[Triplet, ...]
    cut: bool
    keys: tuple[tuple[str, str, str], ...] = ()


def is_current(row: Mapping[str, Any], at: int) -> bool:
    """Whether the edge of a row read is current at ``at``: valid from at or before ``at``,
    not invalidated by it."""
    return row["valid_from"] <= at and (row["invalidated_at"] is None or row["invalidated_at"] > at)


_FIELDS = tuple(COLUMNS.replace(" ", "").split(","))


def from_row(row: Mapping[str, Any]) -> Triplet:
    """The triplet of a row read with (at least) its record's columns."""
    return Triplet(*(row[k] for k in _FIELDS))

"""``recall_analogy(a, b, c)``: a:b :: c:? by proportional relation transfer only (seed 000).

The relation is read off the store, never guessed: the predicates ``P`` of the current edges
from ``a`` to ``b``, then ``c``'s current outgoing neighbours ``d`` over those predicates. Each
``d`` is ranked by ``Σ_p w(a→b, p) · w(c→d, p)`` (ties by name) and returned with its
supporting edges — the a→b edge and the c→d edge of every predicate it shares, with the memories
that stated them. No model call, no vector: when the store holds no such relation the call
abstains and says which part is missing:

- ``unknown_entity``: a, b or c is at neither end of any edge of the realm (current or not);
- ``a_b_unrelated``: no edge leads from a to b now (or at ``as_of``); an edge from b to a, or
  one that was invalidated, is named in the reason but does not count;
- ``c_no_edge``: c has no current edge over P; its other predicates are named.

Names are resolved through the realm's aliases. Every read of one node's edges is bounded
(``cap`` per node and predicate, heaviest first), so a hub with 100,000 edges costs what
``cap`` rows cost; ``bounded`` says when a bound cut a read, and so that the ranking covers
the heaviest edges only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chitta.relations.names import check_entity
from chitta.relations.service import (
    check_limit,
    check_realm,
    triplet_from_dict,
    triplet_to_dict,
)
from chitta.store import triplets as table
from chitta.store.base import Store
from chitta.store.records import Triplet
from chitta.validate import format_time, parse_time

#: Edges read per node and predicate, heaviest first.
FANOUT_CAP = 250
#: Most answers one call returns.
MAX_ANSWERS = 100


@dataclass(frozen=True, slots=True)
class Support:
    """Why ``d`` answers: the a→b edge and the c→d edge of one shared predicate."""

    predicate: str
    ab: Triplet
    cd: Triplet


@dataclass(frozen=True, slots=True)
class Answer:
    entity: str  # as the heaviest supporting c→d edge writes it
    key: str  # its canonical key
    score: float
    supports: tuple[Support, ...]


@dataclass(frozen=True, slots=True)
class Analogy:
    a: str
    b: str
    c: str
    resolved: dict[str, str]  # a, b, c -> the canonical keys they were read as
    as_of: int | None
    predicates: tuple[str, ...]  # P: the predicates from a to b
    answers: tuple[Answer, ...]
    abstained: bool
    reason_code: str | None  # unknown_entity | a_b_unrelated | c_no_edge
    reason: str | None
    bounded: tuple[str, ...] = field(default_factory=tuple)  # what a bound cut, in words

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "c": self.c, "resolved": self.resolved,
            "as_of": format_time(self.as_of), "predicates": list(self.predicates),
            "abstained": self.abstained, "reason_code": self.reason_code,
            "reason": self.reason, "bounded": bool(self.bounded), "bounds": list(self.bounded),
            "answers": [
                {"entity": x.entity, "key": x.key, "score": round(x.score, 6),
                 "supports": [{"predicate": s.predicate, "ab": triplet_to_dict(s.ab),
                               "cd": triplet_to_dict(s.cd)} for s in x.supports]}
                for x in self.answers
            ],
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Analogy:
        """An analogy from its reply (:meth:`as_dict`'s inverse; scores as rounded there)."""
        answers = tuple(
            Answer(entity=x["entity"], key=x["key"], score=x["score"],
                   supports=tuple(Support(s["predicate"], triplet_from_dict(s["ab"]),
                                          triplet_from_dict(s["cd"])) for s in x["supports"]))
            for x in data["answers"]
        )  # fmt: skip
        return cls(a=data["a"], b=data["b"], c=data["c"], resolved=dict(data["resolved"]),
                   as_of=parse_time(data["as_of"], "as_of"),
                   predicates=tuple(data["predicates"]), answers=answers,
                   abstained=data["abstained"], reason_code=data["reason_code"],
                   reason=data["reason"], bounded=tuple(data["bounds"]))  # fmt: skip


def recall_analogy(
    store: Store,
    a: object,
    b: object,
    c: object,
    *,
    now: int,
    realm: object = None,
    as_of: object = None,
    limit: object = 10,
    cap: int = FANOUT_CAP,
) -> Analogy:
    """a:b :: c:? over ``realm``'s triplets current now (or at ``as_of``)."""
    realm_name = check_realm(realm)
    given = {"a": check_entity(a, "a"), "b": check_entity(b, "b"), "c": check_entity(c, "c")}
    at_given = parse_time(as_of, "as_of")
    most = check_limit(limit, MAX_ANSWERS)
    at = now if at_given is None else at_given
    names = {k: store.names_of(realm_name, key) for k, (_, key) in given.items()}
    base = _Base(given["a"][0], given["b"][0], given["c"][0],
                 {k: ns[0] for k, ns in names.items()}, at_given)  # fmt: skip

    unknown = [
        f"{k} {given[k][0]!r}" for k in names if not store.entity_known(realm_name, names[k])
    ]
    if unknown:
        return base.abstain(
            (), "unknown_entity",
            f"no edge of realm {realm_name!r} names {' or '.join(unknown)}",
        )  # fmt: skip

    ab = store.triplets_between(realm_name, names["a"], names["b"], at, cap)
    if not ab.rows:
        return base.abstain((), "a_b_unrelated", _unrelated(store, realm_name, names, at, base))

    heaviest: dict[str, Triplet] = {}
    for t in ab.rows:  # heaviest first: the first edge of each predicate is its best
        heaviest.setdefault(table.predicate_key(t.predicate), t)
    predicates = tuple(heaviest)
    cd = store.triplets_outgoing(realm_name, names["c"], predicates, at, cap)
    bounded = [f"more than {cap} edges from a to b; read the {cap} heaviest"] if ab.cut else []
    if cd.cut:
        bounded.append(
            f"c has more edges over a predicate than were read (its {cap} heaviest current "
            f"ones among its {table.SCAN_FACTOR * cap} heaviest); ranked those"
        )
    answers = _rank(store, realm_name, heaviest, cd)[:most]
    if not answers:
        others, cut = store.out_predicates(realm_name, names["c"], at)
        if cut:
            bounded.append(f"c has edges over more than {table.PREDICATES_SEEN} predicates; "
                           "named the current ones among the first")  # fmt: skip
        among = " among the edges read" if cd.cut else ""
        return base.abstain(
            predicates, "c_no_edge",
            f"{base.c!r} has no current edge over {', '.join(predicates)}{among}"
            f"{_other_predicates(others, cut)}",
            bounded,
        )  # fmt: skip
    return Analogy(base.a, base.b, base.c, base.resolved, at_given, predicates, tuple(answers),
                   False, None, None, tuple(bounded))  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Base:
    a: str
    b: str
    c: str
    resolved: dict[str, str]
    as_of: int | None

    def abstain(
        self, predicates: Sequence[str], code: str, reason: str, bounded: Sequence[str] = ()
    ) -> Analogy:
        return Analogy(self.a, self.b, self.c, self.resolved, self.as_of, tuple(predicates), (),
                       True, code, reason, tuple(bounded))  # fmt: skip


def _rank(
    store: Store, realm: str, heaviest: dict[str, Triplet], edges: table.Bounded
) -> list[Answer]:
    """c's neighbours by Σ_p w(a→b, p) · w(c→d, p), each with one support per predicate."""
    canon = store.canonical_many(realm, (o for _, _, o in edges.keys))
    supports: dict[str, dict[str, Triplet]] = {}
    for t, (_, p, o) in zip(edges.rows, edges.keys, strict=True):
        held = supports.setdefault(canon[o], {})  # each d's heaviest edge of each predicate
        if p not in held or (t.weight, held[p].id) > (held[p].weight, t.id):
            held[p] = t
    answers = []
    for key, by_predicate in supports.items():
        score = sum(heaviest[p].weight * t.weight for p, t in by_predicate.items())
        best = max(by_predicate.values(), key=lambda t: (t.weight, t.id))
        held_by = tuple(Support(p, heaviest[p], t) for p, t in by_predicate.items())
        answers.append(Answer(best.object, key, score, held_by))
    answers.sort(key=lambda x: (-x.score, x.key))
    return answers


def _other_predicates(others: Sequence[str], cut: bool) -> str:
    """The end of a ``c_no_edge`` reason: what c's current edges are over instead."""
    if others:
        return f"; its current edges are over: {', '.join(others)}{', …' if cut else ''}"
    if cut:
        return f"; none of the first {table.PREDICATES_SEEN} predicates of its edges is current"
    return "; it has no current outgoing edge at all"


def _unrelated(
    store: Store, realm: str, names: dict[str, tuple[str, ...]], at: int, base: _Base
) -> str:
    """Why a and b count as unrelated, with what the store does hold between them."""
    reason = f"no current edge leads from {base.a!r} to {base.b!r}"
    back = store.triplets_between(realm, names["b"], names["a"], at, 5).rows
    past = store.find_triplets(realm, subjects=names["a"], objects=names["b"], at=None,
                              limit=5)  # fmt: skip
    if past:
        dates = ", ".join(
            f"{t.predicate} (valid from {format_time(t.valid_from)})"
            if t.valid_from > at
            else f"{t.predicate} (invalidated {format_time(t.invalidated_at)})"
            for t in past
        )
        reason += f"; the edges between them are not current at that time: {dates}"
    if back:
        preds = ", ".join(dict.fromkeys(t.predicate for t in back))
        reason += f"; edges lead the other way, from {base.b!r} to {base.a!r} ({preds})"
    return reason

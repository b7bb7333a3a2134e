"""What a time cue does to an answer: the cue arm's ranking, the bounded move, the seats.

Seed 002 §2.3, §2.4, §2.7, §2.9, §2.11 (policy ``cued-v0.3``). The cue never touches a fused
score, the gate, autocut or the count. After they have decided which rows are returned:

- :func:`move` lifts the returned rows the cue arm also found, each by at most ``L`` places;
- :func:`seats` adds up to ``L`` of the cue arm's best records the answer does not hold and
  the gate and autocut did not refuse.

:func:`merge_cue_lists` builds the cue arm's one ranking from its halves. Pure functions over
ids; ``L`` comes from :data:`chitta.recall.timecue.cue.BOUND`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from chitta.recall.fusion import RRF_K, rrf

#: §2.11: the cue arm searches this deep per list (vector and keyword half, memories and
#: episodes), whatever the count.
CUE_DEPTH = 50
#: The move's constant: k + 1 for the rrf k = 60 of §2.3, so the cue arm's first row earns
#: exactly L (see :func:`move`).
MOVE_K = RRF_K + 1


@dataclass(frozen=True, slots=True)
class Moved:
    """The returned rows in their new order; ``moved`` counts rows whose place changed,
    ``lifted`` the rows that rose (every one of them a row the cue found)."""

    order: tuple[str, ...]
    moved: int
    lifted: int


def merge_cue_lists(lists: Iterable[Sequence[str]], *, depth: int = CUE_DEPTH) -> list[str]:
    """The cue arm's one ranking, best first: its lists fused by reciprocal rank (k = 60).

    §2.7: the vector and keyword halves over memories and over episodes, each cut to its
    first ``depth`` distinct ids. Ties break by best single rank, then by id
    (:func:`chitta.recall.fusion.rrf`). Every id of every cut list is kept.
    """
    return [i for i, _ in merge_cue_scores(lists, depth=depth)]


def merge_cue_scores(
    lists: Iterable[Sequence[str]], *, depth: int = CUE_DEPTH
) -> list[tuple[str, float]]:
    """:func:`merge_cue_lists` with each id's reciprocal-rank score (for the trace's ``raw``)."""
    if depth < 1:
        raise ValueError("the cue arm's depth must be at least 1")
    rankings: dict[str, list[tuple[str, float]]] = {}
    for n, ids in enumerate(lists):
        distinct = list(dict.fromkeys(ids))[:depth]
        rankings[str(n)] = [(i, 0.0) for i in distinct]
    return [(f.id, f.score) for f in rrf(rankings, k=RRF_K)]


def cue_ranks(ranking: Sequence[str]) -> dict[str, int]:
    """Each id's rank on the cue arm, 1 for the best (an id repeated keeps its first rank)."""
    ranks: dict[str, int] = {}
    for i in ranking:
        ranks.setdefault(i, len(ranks) + 1)
    return ranks


def move(returned: Sequence[str], ranks: Mapping[str, int], bound: int) -> Moved:
    """Lift the returned rows the cue arm found, by at most ``bound`` (L) places (§2.3).

    A row's key is ``p - L x 61 / (60 + c)``, sorted ascending: ``p`` its 0-based position in
    ``returned`` (1-based would shift every key alike and change nothing), ``c`` its 1-based
    rank in ``ranks``. This is the seed's ``p - L x 61 / (61 + c)`` with ``c`` counted from 0,
    the reading under which, as §2.7 states, the cue's first row earns exactly L: counted
    from 1 it would earn 61/62 of L and a ``vague`` cue could never move anything. The bonus
    is at most L, so a row passes only rows fewer than L places ahead, or exactly L ahead on
    a tie. Ties (exact, in fractions): a row the cue found beats one it did not; any other
    tie keeps the original order. So the cue's first row rises exactly L places when it
    stands that far down, and rows it ranks lower rise less (at rank 60, about half of L).
    Rows the cue did not find never rise.
    """
    if bound < 0:
        raise ValueError("L must not be negative")
    if len(set(returned)) != len(returned):
        raise ValueError("the returned rows must be distinct")
    if any(c < 1 for c in ranks.values()):
        raise ValueError("cue-arm ranks start at 1")

    def key(item: tuple[int, str]) -> tuple[Fraction, int, int]:
        p, row = item
        c = ranks.get(row)
        if c is None:
            return (Fraction(p), 1, p)
        return (p - Fraction(bound * MOVE_K, RRF_K + c), 0, p)

    order = tuple(row for _, row in sorted(enumerate(returned), key=key))
    was = {row: p for p, row in enumerate(returned)}
    moved = sum(1 for q, row in enumerate(order) if was[row] != q)
    lifted = sum(1 for q, row in enumerate(order) if was[row] > q)
    return Moved(order, moved, lifted)


def seats(
    cue_ranking: Sequence[str],
    returned: Collection[str],
    refused: Collection[str],
    bound: int,
) -> list[str]:
    """The records the cue seats beside the answer (§2.4, §2.11), in cue-arm order.

    Up to ``bound`` (L) of the cue arm's best records that the answer does not hold
    (``returned``) and that the quality gate or autocut did not refuse (``refused``): a
    record no ordinary arm reached, or one they admitted that the count cut. The seats
    displace nothing.
    """
    if bound < 0:
        raise ValueError("L must not be negative")
    out: list[str] = []
    for row in dict.fromkeys(cue_ranking):
        if len(out) >= bound:
            break
        if row not in returned and row not in refused:
            out.append(row)
    return out

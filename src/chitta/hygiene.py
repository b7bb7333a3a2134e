"""Hygiene (issue 21, part 5): near-duplicates merged, value conflicts surfaced, reversibly.

Write-time rules keep most repeats out (the quality gate: a near-duplicate of cosine 0.95 that
adds nothing is folded; a session's burst is folded). What gets past them over months —
the same fact remembered in different scopes of time, before a model change, through an
import — accumulates, and copies crowd a recall's few seats. A hygiene run finds, per realm:

- **Duplicate clusters.** Two live, current memories of one scope and kind are duplicates when
  their cosine is at least :data:`~chitta.config.DEDUP_COSINE` (the write-time rule's 0.95)
  and each adds nothing to the other (chitta/diversity.py: no new name, number, identifier,
  and few new words). Duplicates link into clusters; each cluster keeps its best-written
  member (:func:`best_written`) and the others are *superseded* by it: hidden from recall,
  not deleted. The kept memory takes the cluster's tags, the others' recent access times
  (the last 32 each, as the access history keeps them) and their sessions as replications
  (evidence that it was said again).
- **Value conflicts** (seed 002 §4, "stale conflicts"). Two memories about the same subject
  (cosine at least :data:`CONFLICT_COSINE`) that each state a number the other lacks, with
  no new name on either side ("the staging database listens on port 5432" and "... 5433"),
  are listed together, newer first, with their roles and kinds. Neither is changed: which is
  right is the user's call, and recall keeps returning both (its update marking, recall.md,
  puts the newer first).

A run that changes the store journals what it did in the store's meta table, so
``undo`` puts every merged memory back and the kept memory's tags as they were. The accesses
and replications the kept memory gained stay with it: they happened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from chitta.config import DEDUP_COSINE
from chitta.diversity import adds_nothing, distinctive
from chitta.errors import BadArgument
from chitta.store.access import AccessRecord
from chitta.store.base import Store
from chitta.store.provenance import replication_key
from chitta.store.records import Memory, Scope
from chitta.validate import MAX_TAGS

#: Nearest neighbours read per memory when looking for its duplicates and conflicts.
NEIGHBOURS = 8
#: Cosine at or above which two memories are about the same subject (seed 001's 0.85).
CONFLICT_COSINE = 0.85
#: The meta keys of the journal: one per run, and the index of runs (oldest first).
RUN_PREFIX = "hygiene_run:"
RUNS_KEY = "hygiene_runs"
#: Runs whose journals are kept (and can be undone), the newest.
MAX_RUNS = 100
#: Role order of the best-written member: a user's statement before a tool's, before an
#: assistant's own recorded answer.
ROLE_RANK = {"user": 0, "": 1, "tool": 2, "assistant": 3}


@dataclass(frozen=True, slots=True)
class Merge:
    """One duplicate cluster: the memory kept and those it supersedes."""

    keep: str
    merged: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two memories on one subject stating different numbers, newer first."""

    newer: str
    older: str
    cosine: float
    roles: tuple[str, str]


@dataclass(frozen=True, slots=True)
class Plan:
    """What a hygiene run finds in one realm (and did, when ``run`` names its journal)."""

    realm: str
    scanned: int
    merges: tuple[Merge, ...]
    conflicts: tuple[Conflict, ...]
    run: str | None = None


def best_written(members: Sequence[Memory]) -> Memory:
    """The member a cluster keeps: a user's words before an agent's, then the more confident,
    the stronger, the longer (more complete) text, the older."""
    return min(members, key=lambda m: (
        ROLE_RANK.get(m.source.role or "", 1), -m.confidence.mu, -m.strength,
        -len(m.content), m.created_at, m.id))  # fmt: skip


def _digits(text: str) -> set[str]:
    return {w for w in distinctive(text) if any(ch.isdigit() for ch in w)}


def _names(text: str) -> set[str]:
    return {w.lower() for w in text.split() if w[:1].isupper()}


def conflicts_in_value(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` each state a number the other lacks and neither names someone
    or something new (a new name makes it another subject, not a conflict)."""
    da, db = _digits(a), _digits(b)
    if not (da - db and db - da):
        return False
    na, nb = _names(a) - {w.lower() for w in b.split()}, _names(b) - {w.lower() for w in a.split()}
    return not ({n for n in na if not any(ch.isdigit() for ch in n)}
                or {n for n in nb if not any(ch.isdigit() for ch in n)})  # fmt: skip


def _current(store: Store, realm: str) -> list[Memory]:
    return [m for m in store.iter_memories(realm=realm) if m.superseded_by is None]


def _pairs(
    store: Store, memories: Sequence[Memory], known: dict[str, Memory]
) -> Iterator[tuple[Memory, Memory, float]]:
    """Each near pair with a member of ``memories`` (the smaller id of the two), once, as
    (a, b, cosine). A neighbour not in ``known`` is read from the store (and kept there)."""
    vectors = store.vectors_for([m.id for m in memories])
    for m in memories:
        vector = vectors.get(m.id)
        if vector is None:
            continue
        scope = Scope(m.realm, m.agent_id, m.channel)
        near = [(i, c) for i, c in store.vector_search(vector, scope, NEIGHBOURS + 1)
                if m.id < i and c >= CONFLICT_COSINE]  # fmt: skip
        if missing := [i for i, _ in near if i not in known]:
            known.update(store.get_many(missing))
        for other_id, cosine in near:
            other = known.get(other_id)
            if other is not None and other.superseded_by is None:
                yield m, other, cosine


def _clusters(edges: Sequence[tuple[str, str]]) -> list[list[str]]:
    """Connected components of ``edges`` (union–find), each sorted, in order of their ids."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for x in sorted(parent):
        groups.setdefault(root(x), []).append(x)
    return sorted(groups.values())


def plan(store: Store, realm: str) -> Plan:
    """What hygiene would do in ``realm`` (module docstring); reads only."""
    return plan_among(store, realm, _current(store, realm))


def plan_among(store: Store, realm: str, memories: Sequence[Memory]) -> Plan:
    """What hygiene would do about ``memories`` of ``realm`` and their near neighbours (a
    slice of the realm: the subconscious plans a batch at a time); reads only."""
    memories = [m for m in memories if m.realm == realm and m.superseded_by is None]
    by_id = {m.id: m for m in memories}
    duplicates: list[tuple[str, str]] = []
    conflicts: list[Conflict] = []
    for a, b, cosine in _pairs(store, memories, by_id):
        if (
            cosine >= DEDUP_COSINE
            and a.kind == b.kind
            and adds_nothing(a.content, b.content)
            and adds_nothing(b.content, a.content)
        ):
            duplicates.append((a.id, b.id))  # fmt: skip
        elif conflicts_in_value(a.content, b.content):
            newer, older = sorted((a, b), key=lambda m: (m.event_time or m.created_at, m.id))[::-1]
            roles = (newer.source.role or "", older.source.role or "")
            conflicts.append(Conflict(newer.id, older.id, round(cosine, 4), roles))
    merges = []
    for group in _clusters(duplicates):
        keep = best_written([by_id[i] for i in group])
        # Each one merged must add nothing to the one kept (a chain a~b~c need not be a~c).
        merged = tuple(i for i in group if i != keep.id
                       and adds_nothing(by_id[i].content, keep.content))  # fmt: skip
        if merged:
            merges.append(Merge(keep.id, merged))
    return Plan(realm, len(memories), tuple(merges), tuple(conflicts))


def apply(store: Store, found: Plan, now: int, *, run: str | None = None) -> Plan:
    """Carry out ``found``'s merges and journal them; the plan with the merges done and its
    run id. A memory that changed since the plan (forgotten, superseded, gone) is left as it
    is. ``run`` names a run to add to (the subconscious's sweep); by default a new one,
    ``realm:now``.

    The journal is written before the merges it lists: a process killed between the two
    leaves a run whose undo finds less to put back, never a merge that cannot be undone."""
    run = run or f"{found.realm}:{now}"
    with store.write_lock():
        # Read once: what the journal records is what is merged (nothing else writes
        # meanwhile, under the lock).
        todo = [(keep, members) for merge in found.merges
                for keep, members in [_members(store, merge)] if keep and members]  # fmt: skip
        if not todo:
            return replace(found, merges=(), run=None)
        key = RUN_PREFIX + run
        earlier = json.loads(store.meta(key) or "null") or {"realm": found.realm, "at": now,
                                                              "merges": []}  # fmt: skip
        entries = [{"keep": keep.id, "merged": [m.id for m in members], "tags": list(keep.tags)}
                   for keep, members in todo]  # fmt: skip
        earlier["merges"].extend(entries)
        store.set_meta(key, json.dumps(earlier))
        if run not in (runs := _runs(store)):
            # The oldest journals go past MAX_RUNS: a daemon's daily sweeps must not grow the
            # meta table for ever (their runs can no longer be undone, their merges stand).
            runs = [*runs, run]
            for old in runs[:-MAX_RUNS]:
                store.delete_meta(RUN_PREFIX + old)
            store.set_meta(RUNS_KEY, json.dumps(runs[-MAX_RUNS:]))
        for keep, members in todo:
            _merge(store, keep, members, now)
    done = tuple(Merge(keep.id, tuple(m.id for m in members)) for keep, members in todo)
    return replace(found, merges=done, run=run)


def _members(store: Store, merge: Merge) -> tuple[Memory | None, list[Memory]]:
    """The kept memory (None when it is gone or superseded) and the members still to merge."""
    found = store.get_many([merge.keep, *merge.merged])
    keep = found.get(merge.keep)
    if keep is None or keep.superseded_by is not None:
        return None, []
    return keep, [found[i] for i in merge.merged if i in found and found[i].superseded_by is None]


def _merge(store: Store, keep: Memory, members: list[Memory], now: int) -> None:
    tags = tuple(dict.fromkeys(keep.tags + tuple(t for m in members for t in m.tags)))[:MAX_TAGS]
    store.update_many(
        [
            replace(keep, tags=tags, updated_at=now),
            *(replace(m, superseded_by=keep.id, updated_at=now) for m in members),
        ]
    )
    # Their recent accesses become the kept memory's (through the access writer, which owns
    # the counts): recall's recency sees the cluster as used as often as it was.
    history = store.access_history([m.id for m in members])
    for at in sorted(t for h in history.values() for t in h.times):
        store.record_access(AccessRecord((keep.id,), at))
    kept_from = replication_key(keep.source)
    for m in members:
        key = replication_key(m.source)
        if key and key != kept_from:
            store.add_replication(keep.id, key, now)


def _runs(store: Store) -> list[str]:
    try:
        runs = json.loads(store.meta(RUNS_KEY) or "[]")
    except ValueError:
        return []
    return [r for r in runs if isinstance(r, str)] if isinstance(runs, list) else []


def runs(store: Store) -> list[str]:
    """The ids of the hygiene runs that can be undone, oldest first."""
    return [r for r in _runs(store) if store.meta(RUN_PREFIX + r) is not None]


def undo(store: Store, run: str, now: int) -> int:
    """Put back every memory run ``run`` merged (one superseded by something else since is
    left), and the kept memories' tags as they were; how many came back."""
    raw = store.meta(RUN_PREFIX + run)
    if raw is None:
        known = ", ".join(runs(store)) or "none"
        raise BadArgument(f"no hygiene run {run!r} to undo; runs that can be: {known}")
    back = 0
    with store.write_lock():
        # Newest first: a kept memory merged into twice ends with its tags of before the first.
        for entry in reversed(json.loads(raw)["merges"]):
            found = store.get_many([entry["keep"], *entry["merged"]])
            restored = [replace(found[i], superseded_by=None, updated_at=now)
                        for i in entry["merged"]
                        if i in found and found[i].superseded_by == entry["keep"]]  # fmt: skip
            keep = found.get(entry["keep"])
            changed = list(restored)
            if keep is not None:
                changed.append(replace(keep, tags=tuple(entry["tags"]), updated_at=now))
            store.update_many(changed)
            back += len(restored)
        store.delete_meta(RUN_PREFIX + run)
        store.set_meta(RUNS_KEY, json.dumps([r for r in _runs(store) if r != run]))
    return back

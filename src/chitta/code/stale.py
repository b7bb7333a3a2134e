"""Which recalled memories may be stale: a linked symbol's body changed since the link.

A memory linked to a symbol (code/links.py) is ``possibly_stale`` when the symbol's body
hash now differs from the hash recorded with the link, or the symbol is gone; the mark
names the symbol and the commit range, from the commit the linked body was indexed at to
the latest index's commit of its repository (or, when a re-index of the symbol's file wrote
it after that index, the commit that re-index recorded). Recall ranks such a memory below
an unchanged one of equal relevance (recall/scoring.py ``STALE_FACTOR``).

``--as-of-commit REV`` (:func:`as_of_runs`) reads the symbol table as it was at REV's index:
per repository with a link, the newest index run at or before REV. "At or before", kept
simple: REV is resolved in the repository's work tree (``git rev-parse``) when the folder
is there, else matched as a prefix of the commits the runs recorded; the run chosen is the
last run (in index order) at exactly that commit, else, with the work tree there, the last
run whose commit is an ancestor of REV (``git merge-base --is-ancestor``). A repository
where neither finds a run is left out: its links are not judged. REV that no repository of
the realm knows is refused.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.errors import CommitNotIndexed
from chitta.store.base import Store
from chitta.store.code_links import IndexRun, LinkState

#: The shortest prefix of a recorded commit that names it without git.
MIN_PREFIX = 4


@dataclass(frozen=True, slots=True)
class StaleLink:
    """One linked symbol that changed (``removed``: gone) since the memory was linked."""

    symbol_id: str
    qualified: str
    repo: str
    path: str | None
    change: str  # "changed" | "removed"
    since: str | None  # the commit the linked body was indexed at
    until: str | None  # the latest index's commit (or the as-of run's)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (a recall hit's ``possibly_stale`` entries)."""
        return {"symbol_id": self.symbol_id, "symbol": self.qualified, "repo": self.repo,
                "path": self.path, "change": self.change, "since_commit": self.since,
                "until_commit": self.until}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StaleLink:
        return cls(d["symbol_id"], d["symbol"], d["repo"], d.get("path"), d["change"],
                   d.get("since_commit"), d.get("until_commit"))  # fmt: skip


def staleness(
    store: Store, realm: str, memory_ids: Sequence[str], as_of: dict[str, IndexRun] | None = None
) -> dict[str, tuple[StaleLink, ...]]:
    """The memories of ``memory_ids`` that may be stale, with their changed symbols: against
    the symbol table now, or as of the runs of ``as_of`` (repo → run)."""
    if not memory_ids:
        return {}
    tables = store.code()
    if as_of is None:
        states = tables.links_of(realm, memory_ids)
        latest = _latest_runs(store, realm, {s.link.repo for s in states if s.changed})
    else:
        states = tables.links_as_of(realm, memory_ids, as_of)
        latest = dict(as_of)
    out: dict[str, list[StaleLink]] = {}
    for s in states:
        if s.changed:
            out.setdefault(s.link.memory_id, []).append(_stale(s, latest.get(s.link.repo)))
    return {mid: tuple(links) for mid, links in out.items()}


def _stale(state: LinkState, run: IndexRun | None) -> StaleLink:
    """The mark of a changed link; its range ends at ``run``'s commit (the latest index's),
    or at the changed symbol's own row's when a re-index of its file wrote it after that run
    (or no run was recorded)."""
    lk = state.link
    change = "removed" if state.body_hash is None else "changed"
    until = run.commit if run is not None else state.commit
    if run is not None and state.indexed_at is not None and state.indexed_at > run.at:
        until = state.commit or until
    return StaleLink(lk.symbol_id, lk.qualified, lk.repo, state.path, change, lk.commit, until)


def _latest_runs(store: Store, realm: str, repos: set[str]) -> dict[str, IndexRun]:
    out: dict[str, IndexRun] = {}
    for repo in sorted(repos):
        runs = store.code().index_runs(realm, repo)
        if runs:
            out[repo] = runs[-1]
    return out


def _git(root: str, *args: str) -> str | None:
    if not Path(root).is_dir():
        return None
    try:
        done = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def run_at(runs: Sequence[IndexRun], repo: str, rev: str) -> IndexRun | None:
    """The newest run of ``runs`` (one repository's, in index order) at or before ``rev``."""
    full = _git(repo, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    if full is None:  # no work tree (or git cannot read REV): a recorded commit's prefix
        named = {r.commit for r in runs if r.commit and len(rev) >= MIN_PREFIX
                 and r.commit.startswith(rev.lower())}  # fmt: skip
        if len(named) != 1:
            return None
        full = named.pop()
    exact = [r for r in runs if r.commit == full]
    if exact:
        return exact[-1]
    if _git(repo, "rev-parse", "--is-inside-work-tree") is None:
        return None
    for run in reversed(runs):
        if run.commit and _git(repo, "merge-base", "--is-ancestor", run.commit, full) is not None:
            return run
    return None


def as_of_runs(store: Store, realm: str, rev: str) -> dict[str, IndexRun]:
    """The index run of each of the realm's repositories as of commit ``rev`` (see the
    module docstring); :class:`CommitNotIndexed` when no repository has one."""
    rev = rev.strip()
    if not rev or rev.startswith("-") or any(c.isspace() for c in rev):
        raise CommitNotIndexed(f"{rev!r} is not a commit")
    runs = store.code().index_runs(realm)
    by_repo: dict[str, list[IndexRun]] = {}
    for run in runs:
        by_repo.setdefault(run.repo, []).append(run)
    out = {repo: run for repo, rs in sorted(by_repo.items())
           if (run := run_at(rs, repo, rev)) is not None}  # fmt: skip
    if not out:
        known = "no repository is indexed" if not runs else "no index of it, or before it"
        raise CommitNotIndexed(
            f"commit {rev} has no index in realm {realm!r} ({known}): "
            "index the repository at that commit with `chitta code index`"
        )
    return out


class Judge:
    """The staleness of one recall's candidates, read once per memory: called with the
    scoring pool's ids it answers those that may be stale (recall/rank.py); :meth:`marks`
    gives the hits' marks after."""

    def __init__(self, store: Store, realm: str, as_of: dict[str, IndexRun] | None) -> None:
        self._store, self._realm, self._as_of = store, realm, as_of
        self._seen: dict[str, tuple[StaleLink, ...] | None] = {}

    def __call__(self, ids: Sequence[str]) -> set[str]:
        self._read(ids)
        return {i for i in ids if self._seen.get(i)}

    def marks(self, ids: Sequence[str]) -> dict[str, tuple[StaleLink, ...]]:
        self._read(ids)
        return {i: links for i in ids if (links := self._seen.get(i))}

    def _read(self, ids: Sequence[str]) -> None:
        new = [i for i in dict.fromkeys(ids) if i not in self._seen]
        if new:
            found = staleness(self._store, self._realm, new, self._as_of)
            self._seen.update({i: found.get(i) for i in new})

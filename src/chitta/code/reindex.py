"""Re-indexing the files an edit changed: only those files read again, and only the calls
they can change resolved again (issue 20, part 5: staying current).

:func:`index_files` takes a repository's root and some of its files (what an Edit or Write
tool touched). Each file is checked as :func:`chitta.code.index.index_path` checks it (git's
ignore rules, vendored, generated, binary, too large, its language) and then, by its content
hash, is ``unchanged``, re-extracted and stored whole (``indexed``), or — gone from disk, or
now skipped — ``removed`` with its symbols, calls, imports and bases.

Which calls are resolved again (docs/code.md, "Staying current"):

1. every callsite of the files re-extracted (they start ``pending`` when stored);
2. every callsite elsewhere in the repository whose called name is a *changed name* of the
   files: the name of a symbol added, removed or whose head changed (qualified name, kind,
   signature, parent), or a name a file's imports bind that was added or removed. Those are
   set back to ``pending`` first (:meth:`~chitta.store.code.CodeTables.mark_pending`), so a
   re-index that dies half way leaves them for the next one rather than stale;
3. every callsite of the repository still ``pending`` (left by an earlier run).

A symbol that only moved (new lines) keeps its id, so the calls that point at it stay right
without being resolved again. What this rule leaves to the next whole ``chitta code index``:
a call elsewhere whose answer changes through a name it does not call (a receiver's type
read from a changed function's return annotation, a base class changed so that another
file's method is inherited now).

Resolution needs every file of the repository (the resolver's :class:`~chitta.code.resolve.
index.Index`); reading them all from the store is what a one-file re-index would spend most
of its time on (0.2–0.3 s for 80,000 lines), so the daemon keeps each repository's extracts
in memory (:class:`ExtractCache`), checked against the stored content hashes before each
use: a write by another process is seen, and the cache is read again whole. With them it
keeps the resolver's index, updated for the changed files rather than built again, and each
file's edges as triplets (code/edges.py's pieces), so that the triplets follow the edges of
the files resolved again (:func:`~chitta.code.edges.sync_file_edges`).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chitta.code.answers import Resolver, answers
from chitta.code.edges import Pieces, edge_pieces, sync_file_edges
from chitta.code.ignore import Ignore
from chitta.code.index import (
    HEAD_BYTES,
    Embed,
    Extract,
    LanguageFor,
    _extractor,
    _read,
    content_hash,
    git_commit,
    skip_by_head,
    skip_by_name,
)
from chitta.code.model import FileExtract, Symbol
from chitta.code.resolve import resolve_index
from chitta.code.resolve.index import Index
from chitta.errors import NotAFolder, PathNotFound
from chitta.store.base import Store
from chitta.store.code import PENDING, CodeTables, callsite_key

#: Repositories whose extracts one process keeps (the least recently used goes first).
CACHED_REPOS = 8
#: The most files one re-index takes (an edit touches one; a checkout is a whole index).
MAX_FILES = 256
#: What a re-index reports of the triplets when it resolved nothing.
NO_TRIPLETS = {"added": 0, "kept": 0, "invalidated": 0}


@dataclass(frozen=True, slots=True)
class ReindexReport:
    """What one re-index of some files of a repository did."""

    realm: str
    repo: str
    commit: str | None
    files: int  # asked for
    indexed: int  # extracted and stored (new or changed)
    unchanged: int
    removed: int  # gone from disk or skipped now: their rows went
    skipped: dict[str, int]  # by reason (files not indexed, never indexed before)
    symbols: int  # in the files indexed now
    callsites: int
    parse_errors: int
    changed_names: int  # names whose calls elsewhere were set back to pending
    marked_pending: int  # callsites elsewhere set back to pending by them
    resolved: int  # callsites resolved now (0 when nothing changed or no resolver)
    resolution: dict[str, int] = field(default_factory=dict)  # the repo's callsites by state
    triplets: dict[str, int] = field(default_factory=lambda: dict(NO_TRIPLETS))
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(slots=True)
class Held:
    """What one process keeps of a repository between re-indexes: its extracts by path, the
    resolver's index over them (None until a resolution needs it) and each file's edges as
    triplets (a file not in ``edges`` has not been resolved since they were read)."""

    extracts: dict[str, FileExtract]
    index: Index | None = None
    edges: dict[str, Pieces] = field(default_factory=dict)
    #: The files that may have pending callsites; None: not known (every file may).
    pending: set[str] | None = None
    #: The repository's callsites by state, as the store counts them; None: not counted.
    counts: dict[str, int] | None = None


class ExtractCache:
    """Each repository's :class:`Held` state, kept between re-indexes in one process (the
    daemon's), checked against the store's content hashes on every use."""

    def __init__(self, repos: int = CACHED_REPOS) -> None:
        self._repos = repos
        self._held: OrderedDict[tuple[int, str, str], Held] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # whole reads from the store (a figure for tests and the benchmark)

    def get(self, tables: CodeTables, realm: str, repo: str, stored: dict[str, str]) -> Held:
        """The repository's state, taken out of the cache (the caller changes it and puts it
        back; a re-index running meanwhile reads its own), read from the store when the held
        extracts are not exactly what ``stored`` (path → content hash) says."""
        key = (id(tables), realm, repo)
        with self._lock:
            held = self._held.pop(key, None)
        if held is not None and {p: e.content_hash for p, e in held.extracts.items()} == stored:
            return held
        loaded = {e.path: e for e in tables.extracts(realm, repo)}
        self.loads += 1
        return Held(loaded)

    def put(self, tables: CodeTables, realm: str, repo: str, extracts: dict[str, FileExtract],
            *, index: Index | None = None,
            edges: dict[str, Pieces] | None = None) -> None:  # fmt: skip
        """Hold ``extracts`` as the repository's, as now stored, with the resolver's index
        over exactly them and the files' edges where known."""
        self.hold(tables, realm, repo, Held(dict(extracts), index, dict(edges or {})))

    def hold(self, tables: CodeTables, realm: str, repo: str, held: Held) -> None:
        """Keep ``held`` as the repository's state (as :meth:`put`)."""
        key = (id(tables), realm, repo)
        with self._lock:
            self._held[key] = held
            self._held.move_to_end(key)
            while len(self._held) > self._repos:
                self._held.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


#: The process's cache (the daemon's: it serves one store).
CACHE = ExtractCache()


def handing_over(
    resolver: Resolver, tables: CodeTables, realm: str, repo: str,
    cache: ExtractCache | None = None,
) -> Callable[[Iterable[FileExtract]], Any]:  # fmt: skip
    """``resolver`` as a whole index's ``resolve`` seam that also hands the repository's
    extracts, the resolver's index over them and their edges to ``cache`` (default
    :data:`CACHE`): the first one-file re-index after it reads and builds nothing."""
    held = CACHE if cache is None else cache

    def resolve(extracts: Iterable[FileExtract]) -> Any:
        extracts = list(extracts)
        found = resolver(extracts)
        made = edge_pieces(resolver.last) if resolver.last is not None else {}
        edges = {e.path: {} for e in extracts} | made  # every file's, with none or some
        held.put(tables, realm, repo, {e.path: e for e in extracts}, index=resolver.index,
                 edges=edges)  # fmt: skip
        return found

    return resolve


_HEADS: dict[str, tuple[tuple, str | None]] = {}
_HEADS_LOCK = threading.Lock()


def head_commit(root: Path) -> str | None:
    """:func:`~chitta.code.index.git_commit` of ``root``, asked of git again only when the
    files it reads HEAD from changed (``.git/HEAD``, the branch's loose ref, packed-refs):
    a subprocess is a large part of a one-file re-index."""
    key = root.as_posix()
    sign = _head_files(root)
    if sign is not None:
        with _HEADS_LOCK:
            held = _HEADS.get(key)
        if held is not None and held[0] == sign:
            return held[1]
    commit = git_commit(root)
    if sign is not None and sign == _head_files(root):  # no commit in between
        with _HEADS_LOCK:
            _HEADS[key] = (sign, commit)
    return commit


def _head_files(root: Path) -> tuple | None:
    """What ``HEAD``'s commit is read from, as each file's identity and change time; None
    where it is not told by these files (no ``.git`` folder: a worktree's or submodule's
    ``.git`` file, no git; the reftable format)."""
    git = root / ".git"
    if (git / "reftable").exists():  # refs in tables of their own: ask git each time
        return None
    try:
        head = (git / "HEAD").read_bytes()
        sign = [_stat(git / "HEAD"), _stat(git / "packed-refs")]
    except OSError:
        return None
    if head.startswith(b"ref: "):
        ref = head[5:].strip().decode("utf-8", "replace")
        if ref.startswith("/") or ".." in ref.split("/"):
            return None
        sign.append(_stat(git / ref))
    return (head, *sign)


def _stat(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def git_ignored(root: Path, rel: str) -> bool | None:
    """Whether git ignores ``rel`` in the work tree ``root`` (a tracked file never is); None
    when ``root`` is not a git work tree (or git is missing)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "--", rel],
                              capture_output=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(done.returncode)


def walk_ignored(root: Path, rel: str) -> bool:
    """Whether the ``.gitignore`` files from ``root`` down to ``rel``'s folder leave it out
    (the rule code/ignore.py reads for a folder that is not a git work tree)."""
    ignore = Ignore()
    parts = rel.split("/")
    for depth in range(len(parts)):
        here = "/".join(parts[:depth])
        if depth and ignore.ignored(here, folder=True):
            return True
        ignore.read(root / here if here else root, here)
    return ignore.ignored(rel, folder=False)


def relative(root: Path, path: str | Path) -> str | None:
    """``path`` (absolute, or relative to ``root``) as a path relative to ``root`` with
    ``/``; None when it lies outside. The file may be gone: its folder is what is resolved."""
    p = Path(path).expanduser()
    p = p if p.is_absolute() else root / p
    folder = p.parent.resolve() if p.parent.exists() else Path(os.path.abspath(p.parent))
    try:
        rel = (folder / p.name).relative_to(root).as_posix()
    except ValueError:
        return None
    return rel if rel not in ("", ".") else None


def _head(s: Symbol) -> tuple:
    return (s.qualified, s.kind, s.signature, s.parent)


def changed_names(old: FileExtract | None, new: FileExtract | None) -> set[str]:
    """The names whose calls elsewhere may resolve differently now that ``old`` became
    ``new`` (either None: the file is new, or gone): see the module docstring, rule 2."""
    before = {_head(s): s.name for s in (old.symbols if old else ())}
    after = {_head(s): s.name for s in (new.symbols if new else ())}
    names = {before[k] for k in before.keys() - after.keys()}
    names |= {after[k] for k in after.keys() - before.keys()}
    bound_before = {_bound(i) for i in (old.imports if old else ())}
    bound_after = {_bound(i) for i in (new.imports if new else ())}
    names |= bound_before ^ bound_after
    names.discard("")
    return names


def _bound(imp: Any) -> str:
    """The name an import binds in its file (``d`` of ``from a.b import c as d``)."""
    return imp.alias or imp.name or imp.module.replace("::", ".").rpartition(".")[2]


@dataclass(slots=True)
class _Step:
    indexed: list[FileExtract] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def _examine(folder: Path, rels: Iterable[str], stored: dict[str, str], extract: Extract,
             language_for: LanguageFor) -> _Step:  # fmt: skip
    """Read and extract each file that changed; what goes, what stays, what is skipped."""
    step = _Step()
    for rel in rels:
        reason = skip_by_name(rel)
        language = None if reason else language_for(rel)
        if reason is None and language is None:
            reason = "not_code"
        if reason is None:
            ignored = git_ignored(folder, rel)
            if ignored is None:  # not a git work tree: its .gitignore files, as a walk reads them
                ignored = walk_ignored(folder, rel)
            reason = "ignored" if ignored else None
        data: bytes | str = reason if reason is not None else _read(folder / rel)
        if isinstance(data, bytes):
            data = skip_by_head(data[:HEAD_BYTES]) or data
        if isinstance(data, bytes):
            digest = content_hash(data)
            if stored.get(rel) == digest:
                step.unchanged += 1
                continue
            found = extract(rel, data, language)
            if not found.skipped:
                step.indexed.append(replace(found, path=rel, content_hash=digest))
                continue
            data = found.skipped
        # Not indexed now: a stored file loses its rows; a new one is only counted.
        if rel in stored:
            step.removed.append(rel)
        else:
            step.skip(data)
    return step


def index_files(
    store: Store,
    realm: str,
    root: Path | str,
    paths: Sequence[str | Path],
    *,
    extract: Extract | None = None,
    language_for: LanguageFor | None = None,
    resolve: bool = False,
    embed: Embed | None = None,
    cache: ExtractCache | None = None,
    now: Callable[[], int] = lambda: int(time.time() * 1000),
) -> ReindexReport:
    """Re-index the files ``paths`` (absolute, or relative to ``root``) of the repository or
    folder ``root`` in ``realm`` (see the module docstring). A path outside ``root`` is
    counted as skipped (``outside``). With ``resolve`` the callsites to resolve again are
    resolved, and the triplets of the edges they and the files make kept in step; without,
    they stay ``pending``. ``cache`` defaults to the process's :data:`CACHE`."""
    started = time.monotonic()
    folder = Path(root).expanduser()
    if not folder.is_dir():
        raise (NotAFolder if folder.exists() else PathNotFound)(
            f"{root} is not a folder: give the repository the files belong to"
        )
    folder = folder.resolve()
    if extract is None or language_for is None:
        default_extract, default_language = _extractor()
        extract, language_for = extract or default_extract, language_for or default_language
    cache = CACHE if cache is None else cache
    repo, tables = folder.as_posix(), store.code()
    rels, outside = [], 0
    for p in paths:
        rel = relative(folder, p)
        if rel is None:
            outside += 1
        elif rel not in rels:
            rels.append(rel)
    stored = tables.files(realm, repo)
    step = _examine(folder, rels, stored, extract, language_for)
    if outside:
        step.skipped["outside"] = outside
    commit = head_commit(folder) if step.indexed else None
    done = _Done()
    if step.indexed or step.removed or (resolve and tables.resolution_counts(realm, repo)[PENDING]):
        held = cache.get(tables, realm, repo, stored)
        done = _write_and_resolve(store, realm, repo, held, step, commit, now, resolve, embed)
        cache.hold(tables, realm, repo, held)
    names = done.names
    return ReindexReport(
        realm=realm, repo=repo, commit=commit, files=len(paths), indexed=len(step.indexed),
        unchanged=step.unchanged, removed=len(step.removed),
        skipped=dict(sorted(step.skipped.items())),
        symbols=sum(len(e.symbols) for e in step.indexed),
        callsites=sum(len(e.callsites) for e in step.indexed),
        parse_errors=sum(e.parse_errors for e in step.indexed), changed_names=len(names),
        marked_pending=done.marked, resolved=done.resolved,
        resolution=done.counts if done.counts is not None else
        tables.resolution_counts(realm, repo), triplets=done.triplets,
        seconds=round(time.monotonic() - started, 4),
    )  # fmt: skip


@dataclass(slots=True)
class _Done:
    names: set[str] = field(default_factory=set)  # the changed names
    marked: int = 0
    resolved: int = 0
    triplets: dict[str, int] = field(default_factory=lambda: dict(NO_TRIPLETS))
    counts: dict[str, int] | None = None


def _write_and_resolve(store: Store, realm: str, repo: str, held: Held, step: _Step,
                       commit: str | None, now: Callable[[], int], resolve: bool,
                       embed: Embed | None) -> _Done:  # fmt: skip
    """Store what ``step`` found, set the calls of its changed names back to pending,
    resolve (with ``resolve``) and bring ``held`` up to date with it all."""
    tables, done = store.code(), _Done()
    if not (step.indexed or step.removed):  # calls left pending by an earlier run: find all
        held.pending = None
    index = held.index
    if resolve and index is None:  # over the files as they were: their old edges
        index = held.index = Index(list(held.extracts.values()))
    for ex in step.indexed:
        done.names |= changed_names(held.extracts.get(ex.path), ex)
    for rel in step.removed:
        done.names |= changed_names(held.extracts.get(rel), None)
    written = {ex.path for ex in step.indexed} | set(step.removed)
    calling = _calling(held, done.names, written)
    # The files whose callsites change, counted before and after (not the whole repository).
    changing = None if held.pending is None else sorted(written | set(calling) | held.pending)
    was = None if changing is None else tables.resolution_counts(realm, repo, changing)
    ids = tables.replace_files(realm, repo, step.indexed, commit, now()) if step.indexed else []
    tables.remove_files(realm, repo, step.removed)
    done.marked = tables.mark_pending(realm, repo, sorted(done.names), calling)
    if held.pending is not None:
        held.pending |= {ex.path for ex in step.indexed} | set(calling)
    if embed is not None and ids:
        embed(list(tables.symbols_by_id([i for file_ids in ids for i in file_ids]).values()))
    if index is not None and resolve:
        done.resolved, done.triplets = _resolve_pending(store, realm, repo, held, index, step,
                                                        now())  # fmt: skip
    else:  # not updated here: the next resolution builds it, and looks for every pending
        held.index, held.pending = None, None
    for ex in step.indexed:
        held.extracts[ex.path] = ex
    for rel in step.removed:
        held.extracts.pop(rel, None)
        held.edges.pop(rel, None)
    held.counts = _counts_now(tables, realm, repo, held.counts, changing, was)
    done.counts = dict(held.counts)
    return done


def _resolve_pending(store: Store, realm: str, repo: str, held: Held, index: Index,
                     step: _Step, at: int) -> tuple[int, dict[str, int]]:  # fmt: skip
    """Resolve the repository's pending callsites (only those files' calls are looked at)
    over ``index`` (``held``'s, over the files before ``step``: updated here for the files it
    changed) and keep the triplets of those files' edges in step; how many answers were
    recorded, and the triplets' sync."""
    tables = store.code()
    where = None if held.pending is None else sorted(held.pending)
    pending = tables.callsites(realm, repo, states=(PENDING,), paths=where)
    paths = sorted({c.callsite.path for c in pending} | {ex.path for ex in step.indexed})
    touched = sorted({*paths, *step.removed})
    unknown = [p for p in touched if p not in held.edges and p in index.files]
    before = {p: held.edges.get(p, {}) for p in touched}
    if unknown:  # never resolved since the extracts were read: their edges as they were
        old = edge_pieces(resolve_index(index, unknown))
        before |= {p: old.get(p, {}) for p in unknown}
    index.update(step.indexed, step.removed)
    resolution = resolve_index(index, paths)
    keys = {callsite_key(realm, repo, c.callsite) for c in pending}
    recorded = tables.set_resolutions(realm, repo, [a for a in answers(index, resolution)
                                                    if callsite_key(realm, repo, a.callsite)
                                                    in keys])  # fmt: skip
    new = edge_pieces(resolution)
    after = {p: new.get(p, {}) for p in paths} | {p: {} for p in step.removed}
    sync = sync_file_edges(store, realm, repo, before, after,
                           _elsewhere(held, index, set(touched)), now=at)  # fmt: skip
    held.edges |= {p: after[p] for p in paths}
    held.pending = set()  # every pending callsite has its answer now
    return recorded, sync.as_dict()


def _counts_now(tables: CodeTables, realm: str, repo: str, held: dict[str, int] | None,
                changing: Sequence[str] | None,
                was: dict[str, int] | None) -> dict[str, int]:  # fmt: skip
    """The repository's callsites by state: the held counts with the files ``changing``
    counted again (they were ``was``), or, when any is not known, all counted."""
    if held is None or changing is None or was is None:
        return tables.resolution_counts(realm, repo)
    now = tables.resolution_counts(realm, repo, changing)
    return {s: held.get(s, 0) - was.get(s, 0) + now.get(s, 0)
            for s in dict.fromkeys([*held, *was, *now])}  # fmt: skip


def _calling(held: Held, names: set[str], written: set[str]) -> list[str]:
    """The files, other than ``written``, with a callsite of one of ``names`` (as the held
    extracts, which are what the store holds, say)."""
    if not names:
        return []
    return sorted(p for p, ex in held.extracts.items() if p not in written
                  and any(c.name in names for c in ex.callsites))  # fmt: skip


def _elsewhere(held: Held, index: Index, touched: set[str]) -> Callable[[tuple], bool]:
    """Whether a file other than ``touched`` writes an edge of these keys: by the files'
    edges held, those not held resolved once (then held)."""

    others: list[Pieces] = []  # filled on the first question: most re-indexes ask none

    def writes(key: tuple) -> bool:
        if not others:
            missing = [p for p in index.files if p not in touched and p not in held.edges]
            if missing:
                found = edge_pieces(resolve_index(index, missing))
                held.edges |= {p: found.get(p, {}) for p in missing}
            others.extend(pieces for p, pieces in held.edges.items() if p not in touched)
            others.append({})  # asked once, even for a repository of the touched files only
        return any(key in pieces for pieces in others)

    return writes


def repo_of(repos: Sequence[str], path: str | Path) -> str | None:
    """The indexed repository (of ``repos``, absolute roots) that holds ``path``: the
    deepest one, so a repository indexed inside another takes its own files."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        return None
    folder = p.parent.resolve() if p.parent.exists() else Path(os.path.abspath(p.parent))
    full = (folder / p.name).as_posix()
    found = [r for r in repos if full.startswith(r.rstrip("/") + "/")]
    return max(found, key=len) if found else None


def reindex_paths(store: Store, realm: str, paths: Sequence[str | Path],
                  **kw: Any) -> tuple[list[ReindexReport], list[str]]:  # fmt: skip
    """:func:`index_files` for absolute ``paths`` of any repositories indexed in ``realm``,
    one call per repository; the reports, and the paths that lie in none (left alone)."""
    repos = store.code().repos(realm)
    by_repo: dict[str, list[str]] = {}
    outside: list[str] = []
    for p in paths:
        repo = repo_of(repos, p)
        if repo is None:
            outside.append(str(p))
        else:
            by_repo.setdefault(repo, []).append(str(p))
    reports = [index_files(store, realm, repo, files, **kw)
               for repo, files in sorted(by_repo.items()) if Path(repo).is_dir()]  # fmt: skip
    outside += [p for repo, files in sorted(by_repo.items()) if not Path(repo).is_dir()
                for p in files]  # fmt: skip
    return reports, outside

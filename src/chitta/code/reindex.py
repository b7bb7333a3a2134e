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
use: a write by another process is seen, and the cache is read again whole.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
from chitta.errors import NotAFolder, PathNotFound
from chitta.store.base import Store
from chitta.store.code import PENDING, CodeTables, Resolution, callsite_key

#: Repositories whose extracts one process keeps (the least recently used goes first).
CACHED_REPOS = 8
#: The most files one re-index takes (an edit touches one; a checkout is a whole index).
MAX_FILES = 256

#: ``resolve(extracts, paths)``: the resolver's answers for the callsites written in
#: ``paths``, resolved against every extract (chitta.code.answers.resolve_answers).
ResolveIn = Callable[[Sequence[FileExtract], Collection[str]], Sequence[Resolution]]


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
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class ExtractCache:
    """Each repository's extracts by path, kept between re-indexes in one process (the
    daemon's), checked against the store's content hashes on every use."""

    def __init__(self, repos: int = CACHED_REPOS) -> None:
        self._repos = repos
        self._held: OrderedDict[tuple[int, str, str], dict[str, FileExtract]] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # whole reads from the store (a figure for tests and the benchmark)

    def get(self, tables: CodeTables, realm: str, repo: str,
            stored: dict[str, str]) -> dict[str, FileExtract]:  # fmt: skip
        """The repository's extracts (a copy to change), read from the store when the held
        ones are not exactly what ``stored`` (path → content hash) says."""
        key = (id(tables), realm, repo)
        with self._lock:
            held = self._held.get(key)
            if held is not None and {p: e.content_hash for p, e in held.items()} == stored:
                self._held.move_to_end(key)
                return dict(held)
        loaded = {e.path: e for e in tables.extracts(realm, repo)}
        self.loads += 1
        return loaded

    def put(self, tables: CodeTables, realm: str, repo: str,
            extracts: dict[str, FileExtract]) -> None:  # fmt: skip
        """Hold ``extracts`` as the repository's, as now stored."""
        key = (id(tables), realm, repo)
        with self._lock:
            self._held[key] = dict(extracts)
            self._held.move_to_end(key)
            while len(self._held) > self._repos:
                self._held.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


#: The process's cache (the daemon's: it serves one store).
CACHE = ExtractCache()


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
    resolve: ResolveIn | None = None,
    embed: Embed | None = None,
    cache: ExtractCache | None = None,
    now: Callable[[], int] = lambda: int(time.time() * 1000),
) -> ReindexReport:
    """Re-index the files ``paths`` (absolute, or relative to ``root``) of the repository or
    folder ``root`` in ``realm`` (see the module docstring). A path outside ``root`` is
    counted as skipped (``outside``). ``resolve`` answers the callsites to resolve again;
    without it they stay ``pending``. ``cache`` defaults to the process's :data:`CACHE`."""
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
    commit = git_commit(folder) if step.indexed else None
    names: set[str] = set()
    marked = resolved = 0
    if step.indexed or step.removed:
        extracts = cache.get(tables, realm, repo, stored)
        for ex in step.indexed:
            names |= changed_names(extracts.get(ex.path), ex)
            extracts[ex.path] = ex
        for rel in step.removed:
            names |= changed_names(extracts.pop(rel, None), None)
        ids = tables.replace_files(realm, repo, step.indexed, commit, now()) if step.indexed else []
        tables.remove_files(realm, repo, step.removed)
        marked = tables.mark_pending(realm, repo, sorted(names))
        cache.put(tables, realm, repo, extracts)
        if embed is not None and ids:
            embed(list(tables.symbols_by_id([i for file_ids in ids for i in file_ids]).values()))
        if resolve is not None:
            resolved = _resolve_pending(tables, realm, repo, list(extracts.values()), resolve)
    elif resolve is not None and tables.resolution_counts(realm, repo)[PENDING]:
        extracts = cache.get(tables, realm, repo, stored)
        cache.put(tables, realm, repo, extracts)
        resolved = _resolve_pending(tables, realm, repo, list(extracts.values()), resolve)
    return ReindexReport(
        realm=realm, repo=repo, commit=commit, files=len(paths), indexed=len(step.indexed),
        unchanged=step.unchanged, removed=len(step.removed),
        skipped=dict(sorted(step.skipped.items())),
        symbols=sum(len(e.symbols) for e in step.indexed),
        callsites=sum(len(e.callsites) for e in step.indexed),
        parse_errors=sum(e.parse_errors for e in step.indexed), changed_names=len(names),
        marked_pending=marked, resolved=resolved,
        resolution=tables.resolution_counts(realm, repo),
        seconds=round(time.monotonic() - started, 4),
    )  # fmt: skip


def _resolve_pending(tables: CodeTables, realm: str, repo: str,
                     extracts: Sequence[FileExtract], resolve: ResolveIn) -> int:  # fmt: skip
    """Resolve the repository's pending callsites (only those files' calls are looked at);
    how many answers were recorded."""
    pending = tables.callsites(realm, repo, states=(PENDING,))
    if not pending:
        return 0
    keys = {callsite_key(realm, repo, c.callsite) for c in pending}
    paths = {c.callsite.path for c in pending}
    answers = [a for a in resolve(extracts, paths)
               if callsite_key(realm, repo, a.callsite) in keys]  # fmt: skip
    return tables.set_resolutions(realm, repo, answers)


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

"""``chitta bench code``: the frozen call-graph benchmark (bench/code.py) run through the
real indexer and the store.

Per language with a truth file: the corpus is fetched (bench/code.py's cache), exactly the
truth's files are copied into a fresh folder (a git work tree of their own, so nothing
around the cache decides what is listed) and indexed into a fresh SQLite store by
:func:`chitta.code.index.index_path` with the resolver's answers
(:func:`chitta.code.answers.resolve_answers`); the call graph is then read back through
the store as the ``symbol_callees`` and ``symbol_callers`` operations read it
(:meth:`CodeTables.callees` / :meth:`CodeTables.callers`, depth 1, per symbol), aligned to
the truth's names (:func:`chitta.bench.code.align`) and scored.

The files the indexer kept also go the pure way (extract, resolve, the ``calls`` edges): the
two scores must agree, so the store's round trip is shown to lose nothing
(``store_matches_pure``). The indexer may leave a truth file out by its own rules (Go's
``zsort*.go`` carry "Code generated ... DO NOT EDIT"): the pure path over all the truth's
files (``pure_all_files``, the figure scored before the indexer existed) is given beside.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from chitta.bench import code
from chitta.code.model import FileExtract
from chitta.errors import CorpusUnavailable
from chitta.store.backends import open_store
from chitta.store.code import AMBIGUOUS, UNRESOLVED, CodeTables

#: The realm the benchmark's stores index into.
REALM = "bench"
#: Edges one symbol's walk may return before the bound would cut it (none come close).
WALK_LIMIT = 100_000


def copy_corpus(truth: code.Truth, root: Path, dest: Path) -> Path:
    """The truth's corpus files (and nothing else) copied from ``root`` to ``dest``, under
    their relative paths, in a git work tree of its own when git is there."""
    for f in truth.files:
        target = dest / str(f["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / str(f["path"]), target)
    with contextlib.suppress(OSError, subprocess.SubprocessError):  # no git: a walk, same files
        subprocess.run(["git", "init", "-q", str(dest)], check=False, capture_output=True,
                       timeout=60)  # fmt: skip
    return dest


def truth_names(truth: code.Truth, symbols: Iterable[tuple[str, str, int]]) -> dict[str, str]:
    """:func:`code.align` over (qualified, path, start_line), each (path, qualified) once at
    its first definition: both ways of reading the graph are renamed by this same map."""
    first: dict[tuple[str, str], int] = {}
    for q, path, line in symbols:
        key = (path, q)
        first[key] = min(line, first.get(key, line))
    return code.align(truth, [(q, path, line) for (path, q), line in sorted(first.items())])


def extract_files(root: Path, paths: Sequence[str]) -> list[FileExtract]:
    """The extractor's records of ``paths`` under ``root``, read straight from the files."""
    from chitta.code.extract import extract, language_for

    return [extract(p, (root / p).read_bytes(), language_for(p)) for p in paths]


def pure_pairs(extracts: Sequence[FileExtract]) -> tuple[set[tuple[str, str]], dict[str, int]]:
    """The resolver's ``calls`` pairs over ``extracts`` and its open callsites by state."""
    from chitta.code.resolve import resolve

    resolution = resolve(extracts)
    pairs = {(e.subject, e.object) for e in resolution.edges if e.predicate == "calls"}
    open_by = {UNRESOLVED: 0, AMBIGUOUS: 0}
    for call in resolution.open:
        open_by[call.state] = open_by.get(call.state, 0) + 1
    return pairs, open_by


def store_pairs(tables: CodeTables, realm: str, repo: str, paths: Sequence[str]) -> dict[str, Any]:
    """The call graph as the store answers it: each symbol's callees and each symbol's
    callers (depth 1), as (caller, callee) qualified-name pairs, with the symbols read."""
    stored = [s for path in paths for s in tables.symbols_in(realm, repo, path)]
    by_id = {s.id: s for s in stored}
    from_callees: set[tuple[str, str]] = set()
    from_callers: set[tuple[str, str]] = set()
    cut = 0
    for s in stored:
        edges, more = tables.callees(realm, s.id, 1, WALK_LIMIT)
        cut += more
        for e in edges:
            target = by_id.get(e.target_id) or tables.symbols_by_id([e.target_id])[e.target_id]
            from_callees.add((s.symbol.qualified, target.symbol.qualified))
        edges, more = tables.callers(realm, s.id, 1, WALK_LIMIT)
        cut += more
        for e in edges:
            if e.caller_id is not None:  # a top-level call with no caller symbol
                from_callers.add((by_id[e.caller_id].symbol.qualified, s.symbol.qualified))
    return {
        "symbols": [(s.symbol.qualified, s.symbol.path, s.symbol.start_line) for s in stored],
        "callees": from_callees,
        "callers": from_callers,
        "cut": cut,
    }


def pure_score_of(
    truth: code.Truth, extracts: Sequence[FileExtract]
) -> tuple[code.Score, dict[str, int]]:
    """The pure path's score (extract, resolve, align, score) and its open calls by state."""
    pairs, open_by = pure_pairs(extracts)
    names = truth_names(
        truth, ((s.qualified, s.path, s.start_line) for e in extracts for s in e.symbols)
    )
    return code.score(truth, code.rename(pairs, names), unresolved=open_by[UNRESOLVED]), open_by


def not_indexed(folder: Path, paths: Sequence[str], indexed: set[str]) -> dict[str, str]:
    """The truth's files the indexer left out, each with the indexer's reason."""
    from chitta.code.index import HEAD_BYTES, skip_by_head, skip_by_name

    out = {}
    for p in paths:
        if p not in indexed:
            head = (folder / p).read_bytes()[:HEAD_BYTES]
            out[p] = skip_by_name(p) or skip_by_head(head) or "extractor"
    return out


def run_language(truth: code.Truth, root: Path, work: Path) -> dict[str, Any]:
    """Index ``truth``'s corpus (fetched at ``root``) into a fresh store under ``work`` and
    score the store's call graph; the pure path's score beside it."""
    from chitta.code.answers import resolve_answers
    from chitta.code.index import index_path

    folder = copy_corpus(truth, root, work / "corpus")
    paths = [str(f["path"]) for f in truth.files]
    with open_store(work / "code.db") as store:
        report = index_path(store, REALM, folder, resolve=resolve_answers)
        tables = store.code()
        read = store_pairs(tables, REALM, report.repo, paths)
        lines = sum(e.lines for e in tables.extracts(REALM, report.repo))
        indexed = set(tables.files(REALM, report.repo))
        counts = tables.resolution_counts(REALM, report.repo)
    names = truth_names(truth, read["symbols"])
    store_score = code.score(truth, code.rename(read["callees"], names),
                             unresolved=counts[UNRESOLVED])  # fmt: skip
    kept = [p for p in paths if p in indexed]
    pure_score, open_by = pure_score_of(truth, extract_files(root, kept))
    all_score = pure_score if kept == paths else pure_score_of(truth, extract_files(root, paths))[0]
    return {
        "score": store_score.as_dict(),
        "pure": pure_score.as_dict(),
        "pure_all_files": all_score.as_dict(),
        "not_indexed": not_indexed(folder, paths, indexed),
        "store_matches_pure": store_score == pure_score,
        "callers_match_callees": read["callers"] == read["callees"],
        "walks_cut": read["cut"],
        "index": {
            "files": report.indexed,
            "lines": lines,
            "symbols": report.symbols,
            "callsites": report.callsites,
            "parse_errors": report.parse_errors,
            "skipped": report.skipped,
            "resolution": counts,
            "seconds": report.seconds,
        },
        "pure_open": open_by,
    }


def run(
    languages: Sequence[str], truth_dir: Path, cache: Path, work: Path, *,
    note: Any = print,
) -> dict[str, Any]:  # fmt: skip
    """Each language's figures (``languages``), and the languages skipped because their
    corpus cannot be fetched, with why. :class:`CorpusDrift` propagates: a changed corpus
    is an error, not a skip."""
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for language in languages:
        truth = code.load(language, truth_dir)
        try:
            root = code.fetch(truth, cache)
        except CorpusUnavailable as exc:
            skipped[language] = str(exc)
            note(f"skipping {language}: its pinned corpus cannot be fetched: {exc}")
            continue
        results[language] = run_language(truth, root, work / language)
    return {"languages": results, "skipped": skipped}


def scores(record: dict[str, Any]) -> list[code.Score]:
    """The store path's scores of a :func:`run` record, in report order."""
    return [code.Score(**figures["score"]) for figures in record["languages"].values()]


def markdown(record: dict[str, Any]) -> str:
    """The P/R table (bench/code.py's) of the call graph as the store answers it, then the
    index's figures, the truth's files it left out, the pure path over all of them, and
    whether the store answered what the pure path over the indexed files gives."""
    lines = ["### Call graph (`chitta bench code`)", "", code.markdown(scores(record))]
    lines.append("| language | files indexed | left out | lines | symbols | callsites "
                 "| resolved | ambiguous | unresolved | all files, pure path: P/R "
                 "| store = pure path |")  # fmt: skip
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for language, f in record["languages"].items():
        i, r, a = f["index"], f["index"]["resolution"], f["pure_all_files"]
        left = ", ".join(f"{Path(p).name} ({why})" for p, why in f["not_indexed"].items())
        same = "yes" if f["store_matches_pure"] and f["callers_match_callees"] else "**no**"
        lines.append(f"| {language} | {i['files']} | {left or 0} | {i['lines']} "
                     f"| {i['symbols']} | {i['callsites']} | {r['resolved']} "
                     f"| {r['ambiguous']} | {r['unresolved']} "
                     f"| {a['precision']:.3f}/{a['recall']:.3f} | {same} |")  # fmt: skip
    for language, why in record["skipped"].items():
        lines.append(f"\n{language}: skipped, {why}")
    return "\n".join(lines) + "\n"

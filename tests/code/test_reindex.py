"""Re-indexing given files (code/reindex.py) on real git repositories: only those files read,
removed ones gone with their rows, the calls elsewhere of a name a file starts or stops
defining resolved again, ignored and outside files left alone, and the extract cache checked
against the store."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chitta.code.answers import resolve_answers
from chitta.code.index import git_commit, index_path
from chitta.code.reindex import (
    ExtractCache,
    changed_names,
    head_commit,
    index_files,
    reindex_paths,
)
from chitta.code.resolve.index import Index
from chitta.errors import NotAFolder
from chitta.store.code import PENDING, RESOLVED, UNRESOLVED

FILES = {
    "app/main.py": (
        "from app.util import helper\n\n\ndef run():\n    return helper(1) + later()\n"
    ),
    "app/util.py": "def helper(n):\n    return n\n",
    "app/other.py": "def other():\n    return 2\n",
    ".gitignore": "scratch.py\n",
}


@pytest.fixture
def repo(git_repo) -> Path:
    return git_repo(FILES)


@pytest.fixture
def indexed(store, repo: Path, python_extractor):
    extract, language_for = python_extractor
    index_path(store, "work", repo, extract=extract, language_for=language_for,
               resolve=resolve_answers)  # fmt: skip
    return store


def reindex(store, repo: Path, paths, python_extractor, cache=None, **kw):
    extract, language_for = python_extractor
    return index_files(store, "work", repo, [str(repo / p) for p in paths], extract=extract,
                       language_for=language_for, resolve=True,
                       cache=cache or ExtractCache(), **kw)  # fmt: skip


def tables(ix: Index) -> dict:
    """An index's lookup tables as plain values, empty entries dropped."""

    def plain(x):
        if isinstance(x, dict):
            kept = {k: plain(v) for k, v in x.items()}
            return {k: v for k, v in kept.items() if v not in ({}, [])}
        return list(x) if isinstance(x, list) else x

    return {name: plain(v) for name, v in vars(ix).items()} if hasattr(ix, "__dict__") else {}


def states(store, name: str) -> dict[str, str]:
    """The state of each callsite of ``name`` in realm work, by caller."""
    return {c.callsite.caller: c.state for c in store.code().callsites("work")
            if c.callsite.name == name}  # fmt: skip


def test_an_edited_file_alone_is_read_and_its_new_function_found(
    indexed, repo: Path, python_extractor, write_files
) -> None:
    write_files(repo, {"app/other.py": "def other():\n    return 2\n\n\ndef fresh():\n    pass\n"})
    report = reindex(indexed, repo, ["app/other.py"], python_extractor)
    assert (report.indexed, report.unchanged, report.removed) == (1, 0, 0)
    assert report.files == 1 and report.commit is not None
    assert [s.symbol.qualified for s in indexed.code().find_symbols("work", "fresh")] == [
        "app.other.fresh"]  # fmt: skip
    again = reindex(indexed, repo, ["app/other.py"], python_extractor)
    assert (again.indexed, again.unchanged, again.resolved) == (0, 1, 0)


def test_a_name_a_file_starts_defining_resolves_calls_elsewhere(
    indexed, repo: Path, python_extractor, write_files
) -> None:
    assert states(indexed, "later") == {"app.main.run": UNRESOLVED}
    write_files(repo, {"app/main.py": FILES["app/main.py"] + "\n\ndef later():\n    return 0\n"})
    report = reindex(indexed, repo, ["app/main.py"], python_extractor)
    assert states(indexed, "later") == {"app.main.run": RESOLVED}
    assert report.resolution[PENDING] == 0
    # A definition that goes sets its calls elsewhere back, and they resolve to nothing.
    assert states(indexed, "helper") == {"app.main.run": RESOLVED}
    write_files(repo, {"app/util.py": "def renamed(n):\n    return n\n"})
    report = reindex(indexed, repo, ["app/util.py"], python_extractor)
    assert report.changed_names == 2 and report.marked_pending == 1  # helper, renamed
    assert states(indexed, "helper") == {"app.main.run": UNRESOLVED}


def test_a_removed_file_goes_with_its_rows_and_its_callers_answers(
    indexed, repo: Path, python_extractor
) -> None:
    (repo / "app/util.py").unlink()
    report = reindex(indexed, repo, ["app/util.py"], python_extractor)
    assert report.removed == 1 and indexed.code().find_symbols("work", "helper") == []
    assert "app/util.py" not in indexed.code().files("work", report.repo)
    assert states(indexed, "helper") == {"app.main.run": UNRESOLVED}


def test_ignored_skipped_and_outside_files_are_left_alone(
    indexed, repo: Path, python_extractor, write_files, tmp_path: Path
) -> None:
    write_files(repo, {"scratch.py": "def scratch():\n    pass\n", "notes.txt": "hi\n",
                       "node_modules/x/index.py": "def x():\n    pass\n"})  # fmt: skip
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text("def far():\n    pass\n")
    extract, language_for = python_extractor
    report = index_files(indexed, "work", repo,
                         [str(repo / "scratch.py"), "notes.txt", "node_modules/x/index.py",
                          str(elsewhere)],
                         extract=extract, language_for=language_for,
                         cache=ExtractCache())  # fmt: skip
    assert report.indexed == 0 and report.skipped == {"ignored": 1, "not_code": 1,
                                                      "outside": 1, "vendored": 1}  # fmt: skip
    assert indexed.code().find_symbols("work", "scratch") == []
    # A file indexed before and skipped now loses its rows (a tracked file git never ignores).
    write_files(repo, {"app/other.py": "# Code generated by gen. DO NOT EDIT.\nx = 1\n"})
    assert reindex(indexed, repo, ["app/other.py"], python_extractor).removed == 1


def test_paths_go_to_the_indexed_repository_that_holds_them(
    indexed, repo: Path, python_extractor, write_files, tmp_path: Path
) -> None:
    extract, language_for = python_extractor
    write_files(repo, {"app/other.py": "def moved():\n    pass\n"})
    reports, outside = reindex_paths(indexed, "work", [str(repo / "app/other.py"),
                                                       str(tmp_path / "x.py")],
                                     extract=extract, language_for=language_for,
                                     cache=ExtractCache())  # fmt: skip
    assert [r.indexed for r in reports] == [1] and outside == [str(tmp_path / "x.py")]
    assert reindex_paths(indexed, "elsewhere", [str(repo / "app/other.py")]) == (
        [], [str(repo / "app/other.py")])  # fmt: skip


def test_the_cache_is_read_once_and_again_after_another_write(
    indexed, repo: Path, python_extractor, write_files
) -> None:
    cache = ExtractCache()
    for n in range(3):
        write_files(repo, {"app/other.py": f"def other{n}():\n    return {n}\n"})
        reindex(indexed, repo, ["app/other.py"], python_extractor, cache=cache)
    assert cache.loads == 1
    # A write the cache did not see (a whole index, another process): read again.
    write_files(repo, {"app/util.py": "def helper(n):\n    return n + 1\n"})
    extract, language_for = python_extractor
    index_path(indexed, "work", repo, extract=extract, language_for=language_for)
    write_files(repo, {"app/other.py": "def other():\n    return 9\n"})
    reindex(indexed, repo, ["app/other.py"], python_extractor, cache=cache)
    assert cache.loads == 2 and states(indexed, "helper") == {"app.main.run": RESOLVED}


def test_changed_names_are_definitions_and_imports_that_came_or_went(python_extractor) -> None:
    extract, _ = python_extractor
    old = extract("m.py", b"from a import b\n\ndef f():\n    pass\n\ndef g(x):\n    pass\n")
    moved = extract("m.py", b"from a import b\n\n\ndef f():\n    pass\n\ndef g(x):\n    pass\n")
    assert changed_names(old, moved) == set()  # lines moved only: ids and answers hold
    new = extract("m.py", b"from a import c\n\ndef f():\n    pass\n\ndef h():\n    pass\n")
    assert changed_names(old, new) == {"b", "c", "g", "h"}
    assert changed_names(None, old) == {"m", "b", "f", "g"}


def test_a_root_that_is_not_a_folder_is_refused(store, repo: Path) -> None:
    with pytest.raises(NotAFolder):
        index_files(store, "work", repo / "app/util.py", ["app/util.py"])


def answers_of(store) -> dict[tuple, tuple]:
    """Each stored callsite's answer by where it is written: its state and the qualified
    names of its target or candidates."""
    code = store.code()
    calls = code.callsites("work")
    ids = [i for c in calls for i in (c.target_id, *c.candidates) if i]
    names = {i: s.symbol.qualified for i, s in code.symbols_by_id(ids).items()}
    return {(c.callsite.path, c.callsite.line, c.callsite.caller, c.callsite.name):
            (c.state, names.get(c.target_id), sorted(names[i] for i in c.candidates))
            for c in calls}  # fmt: skip


EDITS: list[dict[str, str | None]] = [
    {"app/other.py": "def other():\n    return helper(2)\n\n\ndef fresh():\n    pass\n"},
    {"app/util.py": "def renamed(n):\n    return n\n"},  # helper gone: its callers open
    {"app/main.py": "from app.util import renamed\nfrom app.other import fresh\n\n\n"
                    "def run():\n    return renamed(1) + later() + fresh()\n"},  # imports
    {"app/later.py": "def later():\n    return 0\n\n\nclass Box:\n    def put(self):\n"
                     "        return self.get()\n\n    def get(self):\n        return 1\n"},
    {"app/other.py": None},  # removed
    {"app/util.py": "def helper(n):\n    return n\n\n\ndef renamed(n):\n    return helper(n)\n"},
    {"app/main.py": "from app.util import helper\nfrom app.later import later, Box\n\n\n"
                    "def run():\n    return helper(1) + later() + Box().put() + fresh()\n"},
]  # fmt: skip


def test_re_indexed_edits_answer_as_a_whole_index_from_scratch(
    indexed, repo: Path, python_extractor, write_files, fresh_stores
) -> None:
    """After each edit (a function added, one renamed, imports changed, a file added, one
    removed) the calls stored are what a whole index of the same files from scratch stores,
    the held index is one built afresh, and the counts reported are the store's."""
    cache = ExtractCache()
    extract, language_for = python_extractor
    for n, edit in enumerate(EDITS):
        for rel, text in edit.items():
            if text is None:
                (repo / rel).unlink()
            else:
                write_files(repo, {rel: text})
        report = reindex(indexed, repo, list(edit), python_extractor, cache=cache)
        with fresh_stores() as scratch:
            index_path(scratch, "work", repo, extract=extract, language_for=language_for,
                       resolve=resolve_answers)  # fmt: skip
            assert answers_of(indexed) == answers_of(scratch), n
        code = indexed.code()
        assert report.resolution == code.resolution_counts("work", report.repo), n
        held = cache.get(code, "work", report.repo, code.files("work", report.repo))
        assert held.index is not None
        assert tables(held.index) == tables(Index(list(held.extracts.values()))), n
        cache.hold(code, "work", report.repo, held)
    assert cache.loads == 1


def test_heads_commit_is_asked_again_when_a_commit_or_a_checkout_moves_it(
    repo: Path, write_files
) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True)  # fmt: skip
        return done.stdout.strip()

    assert head_commit(repo) == git_commit(repo) == git("rev-parse", "HEAD")
    write_files(repo, {"app/new.py": "x = 1\n"})
    git("add", "-A")
    git("commit", "-qm", "second")
    assert head_commit(repo) == git("rev-parse", "HEAD")
    git("checkout", "-q", "-b", "side", "HEAD~1")
    assert head_commit(repo) == git("rev-parse", "HEAD")
    git("pack-refs", "--all")
    git("checkout", "-q", "--detach", "side")
    assert head_commit(repo) == git("rev-parse", "HEAD")

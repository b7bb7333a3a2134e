"""The call-graph benchmark: the scorer counts right, and every truth file is well formed
against its real corpus (fetched from its registry once, into a cache)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from chitta.bench import code
from chitta.errors import CorpusDrift, CorpusUnavailable

REPO = Path(__file__).resolve().parents[2]
TRUTH_DIR = REPO / "benchmarks" / "code"
PRESENT = [lang for lang in code.LANGUAGES if (TRUTH_DIR / lang / "truth.json").exists()]
CACHE = Path(os.environ.get("CHITTA_BENCH_CACHE", Path.home() / ".cache" / "chitta" / "bench-code"))


def _tiny() -> code.Truth:
    def e(caller, callee, kind, line=1, candidates=()):
        return code.Edge(caller, callee, "a.py", line, kind, candidates=tuple(candidates))

    edges = (
        e("m.f", "m.g", "true"),
        e("m.f", "m.A.run", "true", 2),
        e("m.f", "m.B.run", "false", 2),
        e("m.g", "m.h", "true"),
        e("m.g", None, "unresolvable", 3, ["m.A.stop", "m.B.stop"]),
    )
    names = ["m.f", "m.g", "m.h", "m.A.run", "m.B.run", "m.A.stop", "m.B.stop"]
    symbols = {
        q: ({"file": "a.py", "line": i + 1, "kind": "function"},) for i, q in enumerate(names)
    }
    return code.Truth("python", {"files": []}, symbols, edges)


def test_score_counts_true_false_guessed_and_ignores_uncovered_callers():
    predicted = [
        ("m.f", "m.g"),  # true
        ("m.f", "m.B.run"),  # the tempting false edge
        ("m.g", "m.A.stop"),  # a guess at an unresolvable site
        ("other.x", "m.g"),  # caller outside the corpus: not judged
    ]
    s = code.score(_tiny(), predicted, unresolved=4)
    assert (s.true_pairs, s.found, s.predicted) == (3, 1, 3)
    assert (s.false_taken, s.guessed, s.unresolvable_sites) == (1, 1, 1)
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 3)
    # callees: m.f wants {g, A.run} got {g, B.run}: P 1/2 R 1/2; m.g wants {h} got {A.stop}: 0, 0
    assert (s.callees_precision, s.callees_recall) == (pytest.approx(0.25), pytest.approx(0.25))
    # callers: g <- {f} got {f}: 1, 1; A.run <- {f}: 0, 0; h <- {g}: 0, 0
    assert (s.callers_precision, s.callers_recall) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert s.unresolved == 4


def test_score_perfect_and_empty():
    t = _tiny()
    perfect = code.score(t, t.pairs("true"))
    assert (perfect.precision, perfect.recall, perfect.false_taken) == (1.0, 1.0, 0)
    empty = code.score(t, [])
    assert (empty.precision, empty.recall, empty.predicted) == (0.0, 0.0, 0)


def test_align_renames_by_definition_place():
    t = _tiny()
    names = code.align(
        t, [("a.f", "a.py", 1), ("m.g", "b.py", 9), ("x.run", "a.py", 4), ("z", "a.py", 1)]
    )
    assert names == {"a.f": "m.f", "m.g": "m.g", "x.run": "m.A.run"}
    assert code.rename([("a.f", "x.run")], names) == {("m.f", "m.A.run")}


def test_markdown_has_a_row_per_language():
    s = code.score(_tiny(), [("m.f", "m.g")])
    assert "| python | 3 |" in code.markdown([s])


@pytest.mark.parametrize("language", PRESENT)
def test_truth_is_consistent(language):
    t = code.load(language, TRUTH_DIR)
    assert t.language == language
    files = {str(f["path"]) for f in t.files}
    true_sites = [e for e in t.edges if e.kind == "true"]
    assert len(true_sites) >= 150, "the issue asks for at least 150 true edges per language"
    assert t.pairs("true").isdisjoint(t.pairs("false"))
    for e in t.edges:
        assert e.file in files, e
        assert e.kind in ("true", "false", "unresolvable"), e
        assert e.caller in t.symbols or e.caller == "", e
        for name in (e.callee,) if e.callee else e.candidates:
            assert name in t.symbols, e
        if e.kind == "false":
            assert e.why, e
        if e.kind == "unresolvable":
            assert len(e.candidates) >= 1 and e.callee is None, e


def _callee_pattern(name: str) -> re.Pattern[str]:
    # the called name, then a call: `name(`, `name<T>(`, `name::<T>(`, `name?.(` or `new name`
    return re.compile(
        rf"\b{re.escape(name)}\b\s*(::)?\s*(<[^()]*>)?\s*(\?\.)?\s*\(|new\s+{re.escape(name)}\b"
    )


@pytest.fixture(scope="module")
def corpora():
    roots: dict[str, Path] = {}
    errors: dict[str, Exception] = {}
    for language in PRESENT:
        try:
            roots[language] = code.fetch(code.load(language, TRUTH_DIR), CACHE)
        except (CorpusUnavailable, CorpusDrift) as exc:
            errors[language] = exc
    return roots, errors


def _corpus_root(language: str, corpora) -> Path:
    """The fetched corpus root; a skip when the registry cannot give the pinned version (a
    Debian mirror drops superseded JDK builds), a failure when it gives different files."""
    roots, errors = corpora
    exc = errors.get(language)
    if isinstance(exc, CorpusDrift):
        pytest.fail(f"the {language} corpus drifted from its pinned SHA-256: {exc}")
    if exc is not None:
        pytest.skip(
            f"the pinned {language} corpus cannot be downloaded (the mirror no longer offers "
            f"that exact version, or the registry is unreachable): {exc}"
        )
    return roots[language]


@pytest.mark.parametrize("language", PRESENT)
def test_every_corpus_file_has_its_pinned_hash(language, corpora):
    t = code.load(language, TRUTH_DIR)
    code.verify(t, _corpus_root(language, corpora))


@pytest.mark.parametrize("language", PRESENT)
def test_every_edge_line_holds_a_call_of_the_callee(language, corpora):
    t = code.load(language, TRUTH_DIR)
    root = _corpus_root(language, corpora)
    lines = {
        str(f["path"]): (root / str(f["path"])).read_text(encoding="utf-8").splitlines()
        for f in t.files
    }
    bad = []
    for e in t.edges:
        names = [e.written or e.callee] if e.callee else list(e.candidates)
        window = "\n".join(lines[e.file][e.line - 1 : e.line + 2])
        for name in names:
            if not _callee_pattern(name.rsplit(".", 1)[-1]).search(window):
                bad.append(
                    f"{e.file}:{e.line} {e.caller} -> {name}: {lines[e.file][e.line - 1].strip()}"
                )
    assert not bad, "\n".join(bad[:30])
    for q, defs in t.symbols.items():
        for d in defs:
            if int(d["line"]) > 0 and d["kind"] != "module":
                text = "\n".join(lines[str(d["file"])][int(d["line"]) - 1 : int(d["line"]) + 2])
                assert q.rsplit(".", 1)[-1] in text, (q, d)


def test_verify_detects_a_changed_file(tmp_path):
    t = code.Truth("python", {"files": [{"path": "a.py", "sha256": "0" * 64}]}, {}, ())
    (tmp_path / "a.py").write_text("x = 1\n")
    with pytest.raises(CorpusDrift):
        code.verify(t, tmp_path)


def test_a_package_offers_its_pinned_build_then_its_also_builds():
    package = {
        "package": "openjdk-17-source",
        "version": "2",
        "archive": "p_2.deb",
        "also": [{"version": "1", "archive": "p_1.deb"}],
    }
    builds = code._builds(package)
    assert [(b["version"], b["archive"]) for b in builds] == [("2", "p_2.deb"), ("1", "p_1.deb")]
    assert all(b["package"] == "openjdk-17-source" for b in builds)
    assert code._builds({"package": "x", "version": "1", "archive": "x.tgz"}) == [
        {"package": "x", "version": "1", "archive": "x.tgz"}
    ]


def test_a_download_that_no_build_can_give_names_every_build_tried(tmp_path):
    package = {
        "package": "p",
        "version": "2",
        "archive": "p_2.tgz",
        "also": [{"version": "1", "archive": "p_1.tgz"}],
    }
    with pytest.raises(CorpusUnavailable, match=r"p 2.*; .*p 1"):
        code._download("no-such-registry", package, tmp_path)

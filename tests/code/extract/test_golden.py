"""Extraction pinned on real files, per language, by golden summaries (golden/*.json).

Regenerate after an intended change (then read the diff):
    CHITTA_REGOLD=1 pytest tests/code/extract/test_golden.py
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from chitta.code.extract import extract
from chitta.code.model import CALL_FORMS

GOLDEN = Path(__file__).parent / "golden"
REGOLD = os.environ.get("CHITTA_REGOLD") == "1"

#: (source, file inside it, its language): a few real files per language.
CASES = [
    ("click", "click/__init__.py", "python"),
    ("click", "click/decorators.py", "python"),
    ("click", "click/utils.py", "python"),
    ("jpype", "jpype/_jproxy.py", "python"),
    ("ms", "index.js", "javascript"),
    ("rxjs", "dist/esm5/internal/Observable.js", "javascript"),
    ("rxjs", "dist/cjs/internal/symbol/observable.js", "javascript"),
    ("rxjs", "src/internal/Observable.ts", "typescript"),
    ("rxjs", "src/internal/util/createErrorClass.ts", "typescript"),
    ("rxjs", "src/internal/symbol/observable.ts", "typescript"),
    ("react-query", "src/QueryClientProvider.tsx", "tsx"),
    ("react-query", "src/QueryErrorResetBoundary.tsx", "tsx"),
    ("memchr", "src/memchr/iter.rs", "rust"),
    ("memchr", "src/memchr/fallback.rs", "rust"),
    ("memchr", "src/memmem/rabinkarp.rs", "rust"),
    ("jpype", "native/java/org/jpype/pickle/Encoder.java", "java"),
    ("jpype", "native/java/org/jpype/html/HtmlParser.java", "java"),
    ("jpype", "test/harness/jpype/collection/CollectionTest.java", "java"),
    ("jpype", "native/java/org/jpype/JPypeKeywords.java", "java"),
    ("mustermann", "lib/mustermann/ast/expander.rb", "ruby"),
    ("mustermann", "lib/mustermann/pattern.rb", "ruby"),
    ("mustermann", "lib/mustermann/error.rb", "ruby"),
    ("pkg-errors", "errors/errors.go", "go"),
    ("pkg-errors", "errors/stack.go", "go"),
    ("pkg-errors", "errors/stack_test.go", "go"),
    ("pkg-errors", "errors/errors_test.go", "go"),
    ("ujson", "lib/ultrajsondec.c", "c"),
    ("ujson", "python/objToJSON.c", "c"),
    ("ujson", "lib/dconv_wrapper.cc", "cpp"),
    ("ujson", "deps/double-conversion/double-conversion/utils.h", "cpp"),
    ("jpype", "native/common/jp_classtype.cpp", "cpp"),
    ("jpype", "native/common/jp_stringtype.cpp", "cpp"),
]
#: The forms each language's real files above show (Java has no callable lambda or
#: function value; these C, C++, TSX, Rust and Python files call no lambda in place).
FORMS = {
    "python": {"call", "member", "qualified", "indirect"},
    "javascript": set(CALL_FORMS),
    "typescript": set(CALL_FORMS),
    "tsx": {"call", "member", "qualified", "new", "indirect"},
    "rust": {"call", "member", "qualified", "new", "indirect"},
    "java": {"call", "member", "qualified", "new"},
    "ruby": {"call", "member", "qualified", "new", "indirect", "lambda"},
    "go": set(CALL_FORMS),
    "c": {"call", "member", "indirect"},
    "cpp": {"call", "member", "qualified", "new", "indirect"},
}
SAMPLE = 12


def summary(result) -> dict:
    """A compact, stable picture of one FileExtract: counts and the first records of each."""
    by_form = {}
    for call in result.callsites:
        by_form.setdefault(call.form, call)
    return {
        "language": result.language,
        "lines": result.lines,
        "parse_errors": result.parse_errors,
        "counts": {
            "symbols": len(result.symbols),
            "callsites": len(result.callsites),
            "imports": len(result.imports),
            "bases": len(result.bases),
        },
        "kinds": dict(sorted(Counter(s.kind for s in result.symbols).items())),
        "forms": dict(sorted(Counter(c.form for c in result.callsites).items())),
        "symbols": [
            [s.kind, s.qualified, s.parent, s.start_line, s.end_line, s.signature]
            for s in result.symbols[:SAMPLE]
        ],
        "callsites": [
            [c.caller, c.name, c.form, c.receiver, c.qualifier, c.line]
            for c in [*result.callsites[:SAMPLE], *by_form.values()]
        ],
        "imports": [[i.module, i.name, i.alias, i.line] for i in result.imports[:SAMPLE]],
        "bases": [[b.child, b.base, b.line] for b in result.bases[:SAMPLE]],
    }


def _dump(summary_: dict) -> str:
    """One key a line, one record a line: a diff shows which record changed."""
    lines = []
    for key, value in summary_.items():
        if isinstance(value, list):
            rows = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in value)
            lines.append(f' "{key}": [\n{rows}\n ]' if value else f' "{key}": []')
        else:
            lines.append(f' "{key}": {json.dumps(value, ensure_ascii=False)}')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _golden_path(key: str, relative: str) -> Path:
    return GOLDEN / key / (relative.replace("/", "__") + ".json")


@pytest.mark.parametrize(("key", "relative", "language"), CASES, ids=[c[1] for c in CASES])
def test_real_file_matches_its_golden_summary(real_source, key, relative, language):
    path, source = real_source(key, relative)
    got = summary(extract(path, source))
    assert got["language"] == language
    golden = _golden_path(key, relative)
    if REGOLD:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(_dump(got))
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("language", sorted(FORMS))
def test_every_call_form_the_language_has_is_seen_in_its_real_files(real_source, language):
    seen = set()
    for key, relative, case_language in CASES:
        if case_language == language:
            path, source = real_source(key, relative)
            seen |= {call.form for call in extract(path, source).callsites}
    assert seen >= FORMS[language]

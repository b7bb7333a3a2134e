"""Extraction's rules on real files: names, parents, lines, hashes, bad input never fatal."""

from __future__ import annotations

import pytest

from chitta.code.extract import content_hash, extract, language_for
from chitta.code.extract.python import module_name
from chitta.code.model import CALL_FORMS, SYMBOL_KINDS


def _by_name(result, qualified):
    return next(s for s in result.symbols if s.qualified == qualified)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.mjs", "javascript"),
        ("x.cjs", "javascript"),
        ("x.jsx", "javascript"),
        ("x.mts", "typescript"),
        ("x.tsx", "tsx"),
        ("x.rs", "rust"),
        ("X.java", "java"),
        ("x.rb", "ruby"),
        ("x.go", "go"),
        ("x.c", "c"),
        ("x.h", "c"),
        ("x.hpp", "cpp"),
        ("x.cc", "cpp"),
        ("README.md", None),
    ],
)
def test_language_by_extension(path, language):
    assert language_for(path) == language


def test_a_header_with_cpp_in_it_is_cpp_and_a_script_by_its_shebang(real_source):
    _, header = real_source("ujson", "deps/double-conversion/double-conversion/utils.h")
    _, c_header = real_source("ujson", "lib/ultrajson.h")
    assert language_for("utils.h", header) == "cpp"
    assert language_for("ultrajson.h", c_header) == "c"
    assert language_for("bin/tool", b"#!/usr/bin/env python3\nprint(1)\n") == "python"
    assert language_for("bin/tool", b"#!/usr/bin/env node\n") == "javascript"


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("src/a/b.py", "a.b"),
        ("src/a/__init__.py", "a"),
        ("a/b/c.py", "a.b.c"),
        ("lib/python3.11/site-packages/click/core.py", "click.core"),
    ],
)
def test_python_module_names_come_from_the_path(path, module):
    assert module_name(path) == module


def test_python_names_parents_and_lines(real_source):
    path, source = real_source("click", "click/decorators.py")
    result = extract(path, source)
    module = result.symbols[0]
    assert (module.kind, module.qualified, module.parent) == ("module", "click.decorators", None)
    inner = _by_name(result, "click.decorators.make_pass_decorator.decorator.new_func")
    assert inner.parent == "click.decorators.make_pass_decorator.decorator"
    outer = _by_name(result, "click.decorators.make_pass_decorator")
    assert outer.start_line <= inner.start_line <= inner.end_line <= outer.end_line
    lines = source.decode().splitlines()
    assert lines[outer.start_line - 1].startswith("def make_pass_decorator(")
    # Relative imports are read as absolute ones: from .core import Command.
    assert any(i.module == "click.core" and i.name == "Command" for i in result.imports)
    assert all(s.kind in SYMBOL_KINDS for s in result.symbols)
    assert all(c.form in CALL_FORMS for c in result.callsites)


def test_package_init_is_named_by_its_package(real_source):
    path, source = real_source("click", "click/__init__.py")
    assert extract(path, source).symbols[0].qualified == "click"


def test_methods_hang_under_their_types_in_go_rust_and_java(real_source):
    go = extract(*real_source("pkg-errors", "errors/errors.go"))
    method = _by_name(go, "errors.withStack.Cause")
    assert (method.kind, method.parent) == ("method", "errors.withStack")
    rust = extract(*real_source("memchr", "src/memmem/rabinkarp.rs"))
    assert any(s.kind == "method" and s.parent == "NeedleHash" for s in rust.symbols)
    java = extract(*real_source("jpype", "native/java/org/jpype/pickle/Encoder.java"))
    assert _by_name(java, "org.jpype.pickle.Encoder.pack").parent == "org.jpype.pickle.Encoder"


def test_body_hash_changes_with_its_body_only(real_source):
    path, source = real_source("pkg-errors", "errors/errors.go")
    before = {s.qualified: s.body_hash for s in extract(path, source).symbols}
    edited = source.replace(b"return f.msg", b'return f.msg + "!"', 1)
    assert edited != source
    after = {s.qualified: s.body_hash for s in extract(path, edited).symbols}
    changed = {name for name in before if before[name] != after[name]}
    assert changed == {"errors.fundamental.Error"}
    assert extract(path, edited).content_hash == content_hash(edited) != content_hash(source)


def test_a_broken_file_is_extracted_as_far_as_it_parses(real_source):
    path, source = real_source("rxjs", "src/internal/Observable.ts")
    whole = extract(path, source)
    broken = extract(path, source[: len(source) // 2] + b"\n  lift<R>(operator?: {{ \n")
    assert whole.parse_errors == 0
    assert broken.parse_errors > 0 and not broken.skipped
    assert 0 < len(broken.symbols) <= len(whole.symbols)


@pytest.mark.parametrize("garbage", [b"\x00\x01\x02ELF", b"x = '\xff\xfe'\n"])
def test_binary_and_non_utf8_input_is_skipped_not_raised(garbage):
    result = extract("a/b.py", garbage)
    assert result.skipped and not result.symbols
    assert extract("a/b.unknown", b"text").skipped


def test_calls_name_their_enclosing_symbol_or_the_module(real_source):
    path, source = real_source("click", "click/decorators.py")
    result = extract(path, source)
    qualified = {s.qualified for s in result.symbols}
    assert all(c.caller in qualified for c in result.callsites)
    top = [c for c in result.callsites if c.caller == "click.decorators"]
    assert top and all(c.line < 30 or c.caller != "click.decorators" for c in top[:1])


def test_without_the_code_extra_the_error_names_it(monkeypatch):
    from chitta.code.extract import grammars
    from chitta.errors import MissingExtra

    grammars.parser.cache_clear()
    monkeypatch.setitem(__import__("sys").modules, "tree_sitter_python", None)
    try:
        with pytest.raises(MissingExtra, match=r"pip install 'chitta\[code\]'"):
            extract("a/b.py", b"x = 1\n")
    finally:
        grammars.parser.cache_clear()

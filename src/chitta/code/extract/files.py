"""``extract``: a file's bytes to its FileExtract, by the language's Spec."""

from __future__ import annotations

import importlib
from functools import cache

from chitta.code.extract.core import Context, Spec, content_hash, run
from chitta.code.extract.detect import language_for
from chitta.code.extract.grammars import parser
from chitta.code.model import LANGUAGES, FileExtract

#: The module holding each language's Spec (as SPEC, or SPECS by language).
_MODULES = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "javascript",
    "tsx": "javascript",
    "rust": "rust",
    "java": "java",
    "ruby": "ruby",
    "go": "go",
    "c": "cfamily",
    "cpp": "cfamily",
}
#: Bytes looked at for a NUL (binary) and for a .h header's language.
_HEAD = 8192


@cache
def spec_for(language: str) -> Spec:
    module = importlib.import_module(f"chitta.code.extract.{_MODULES[language]}")
    specs = getattr(module, "SPECS", None)
    return specs[language] if specs is not None else module.SPEC


def _lines(source: bytes) -> int:
    return source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)


def _skipped(path: str, language: str, source: bytes, why: str) -> FileExtract:
    return FileExtract(path, language, content_hash(source), _lines(source), skipped=why)


def extract(path: str, source: bytes, language: str | None = None) -> FileExtract:
    """Symbols, callsites, imports and bases of the file at ``path`` (repository-relative,
    with ``/``) whose bytes are ``source``; ``language`` as language_for names it, or found
    from the path. Unknown languages, binary and non-UTF-8 files come back ``skipped``."""
    language = language or language_for(path, source) or ""
    if language not in LANGUAGES:
        return _skipped(path, language, source, f"no grammar for this file ({language or path})")
    if b"\0" in source[:_HEAD]:
        return _skipped(path, language, source, "binary")
    try:
        source.decode("utf-8")
    except UnicodeDecodeError:
        return _skipped(path, language, source, "not UTF-8")
    tree = parser(language).parse(source)
    ctx = Context(path, language, source)
    return run(spec_for(language), tree.root_node, ctx, content_hash(source), _lines(source))

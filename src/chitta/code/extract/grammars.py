"""The tree-sitter parsers, one per language, made once: the ``code`` extra's grammar wheels."""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from chitta.errors import MissingExtra

#: Each language's grammar package and the function in it that gives the grammar.
_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "go": ("tree_sitter_go", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra("code", f"Reading source code ({module} is not installed)") from exc


@cache
def parser(language: str) -> Any:
    """A tree-sitter Parser for ``language`` (one of model.LANGUAGES), made on first use."""
    tree_sitter = _import("tree_sitter")
    module, function = _GRAMMARS[language]
    grammar = getattr(_import(module), function)()
    return tree_sitter.Parser(tree_sitter.Language(grammar))

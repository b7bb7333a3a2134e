"""Lower layers never import higher ones (DESIGN.md §7): checked on the source, module by module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "chitta"


def imports_of(path: Path) -> set[str]:
    """Every chitta module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "chitta" or name.startswith("chitta.")}


def modules(layer: str) -> list[Path]:
    return sorted((SRC / layer).rglob("*.py")) if (SRC / layer).is_dir() else [SRC / layer]


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("store", ("chitta.recall", "chitta.cli", "chitta.daemon", "chitta.mcp", "chitta.api")),
        ("embed", ("chitta.recall", "chitta.cli", "chitta.daemon", "chitta.mcp")),
        ("recall", ("chitta.cli", "chitta.daemon", "chitta.mcp", "chitta.hooks")),
        ("daemon", ("chitta.cli", "chitta.mcp", "chitta.hooks")),
        ("hooks", ("chitta.cli", "chitta.mcp")),
        ("wire.py", ("chitta.cli", "chitta.daemon", "chitta.mcp")),
        # Below the store and every other writer: it imports the errors, no more.
        ("files.py", ("chitta.store", "chitta.recall", "chitta.api", "chitta.cli", "chitta.hooks")),
    ],
)
def test_a_layer_does_not_import_a_higher_one(layer: str, forbidden: tuple[str, ...]) -> None:
    bad = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in modules(layer)
        for name in imports_of(path)
        if name.startswith(forbidden)
    ]
    assert not bad, bad


def test_only_the_command_line_imports_the_command_line() -> None:
    bad = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in sorted(SRC.rglob("*.py"))
        if "cli" not in path.relative_to(SRC).parts[:1] and path.name != "__main__.py"
        for name in imports_of(path)
        if name == "chitta.cli" or name.startswith("chitta.cli.")
    ]
    assert not bad, bad

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
        ("hooks", ("chitta.cli", "chitta.mcp", "chitta.http")),
        # The HTTP face (starlette, uvicorn) is the daemon's only when `serve --http` asks.
        ("daemon", ("chitta.http",)),
        ("store", ("chitta.http",)),
        ("learn", ("chitta.cli", "chitta.daemon", "chitta.mcp", "chitta.hooks", "chitta.api")),
        ("wire.py", ("chitta.cli", "chitta.daemon", "chitta.mcp")),
        # The store imports no settings: a backend is given its location and options.
        ("store", ("chitta.config",)),
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


#: The backend packages: only chitta.store itself (backends.py's open_store) names them.
BACKENDS = ("chitta.store.sqlite", "chitta.store.postgres")
#: What a backend hands out only to itself and its own tests: its connection, its raw reads
#: and its in-memory indexes (the protocol, store/base.py, answers through methods instead).
PRIVATE_ATTRIBUTES = ("_conn", "_query", "triplet_reads", "vector_index", "sparse_index")


def modules_imported(path: Path) -> set[str]:
    """Every chitta module ``path`` imports, ``from package import module`` included."""
    found = imports_of(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_nothing_outside_the_store_imports_a_backend() -> None:
    """The rest of chitta opens a store with store/backends.py and types it with
    store/base.py; a backend's modules (the SQLite connection, its migrations, its FTS5
    search, ...) are its own."""
    bad = [
        f"{path.relative_to(SRC)} imports {name}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "store"
        for name in modules_imported(path)
        if name.startswith(BACKENDS)
    ]
    assert not bad, bad


def test_nothing_outside_the_store_reaches_into_a_backend() -> None:
    bad = [
        f"{path.relative_to(SRC)} uses .{node.attr}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "store"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in PRIVATE_ATTRIBUTES
        # An object's own _conn (a daemon connection's socket) is not the store's.
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert not bad, bad


def test_nothing_outside_the_store_catches_sqlites_errors() -> None:
    """A backend's errors come out as StoreError (store/base.py): nobody else names them. The
    cited ``sqlite_fts`` source opens SQLite files of its own, not a store."""
    bad = [
        f"{path.relative_to(SRC)} catches {ast.unparse(node.type)}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "store" and path.name != "sqlite_fts.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ExceptHandler)
        and node.type is not None
        and "sqlite3" in ast.unparse(node.type)
    ]
    assert not bad, bad


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_cycles(layer: str) -> list[list[str]]:
    """The cycles among ``layer``'s modules, counting every import (those under
    ``TYPE_CHECKING`` and inside functions too): each as the path of modules around it."""
    names = {_module_name(path): path for path in modules(layer)}
    graph = {
        name: sorted(m for m in modules_imported(path) if m in names and m != name)
        for name, path in names.items()
    }
    cycles, done = [], set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycles.append([*path[path.index(name) :], name])
            return
        if name in done:
            return
        for nxt in graph[name]:
            visit(nxt, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
    return cycles


def test_the_recall_modules_import_one_another_without_a_cycle() -> None:
    """The records a recall returns (recall/result.py) sit below every stage that builds or
    reads them, so that no stage imports back the one that imports it."""
    assert not import_cycles("recall"), import_cycles("recall")

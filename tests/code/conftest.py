"""A small real extractor for Python files (the standard library's ``ast``), so the indexer's
tests run end to end whatever the tree-sitter extractor does; and git repositories made in
temporary folders."""

from __future__ import annotations

import ast
import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from chitta.code.model import Base, Callsite, FileExtract, Import, Symbol


def language_for(path: str) -> str | None:
    return "python" if path.endswith(".py") else None


def py_extract(path: str, source: bytes, language: str | None = None) -> FileExtract:
    """Modules, classes, functions and methods; plain and member calls; imports; bases."""
    text = source.decode("utf-8", "replace")
    lines = text.count("\n") + 1
    digest = hashlib.blake2b(source).hexdigest()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return FileExtract(path, "python", digest, lines, parse_errors=1)
    module = path.removesuffix(".py").replace("/", ".")
    symbols = [Symbol(module.rsplit(".", 1)[-1], module, "module", f"module {module}", path, 1,
                      lines, None, "python")]  # fmt: skip
    calls: list[Callsite] = []
    imports: list[Import] = []
    bases: list[Base] = []

    def visit(node: ast.AST, parent: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                q = f"{parent}.{child.name}"
                kind = ("class" if isinstance(child, ast.ClassDef)
                        else "method" if in_class else "function")  # fmt: skip
                body = ast.get_source_segment(text, child) or ""
                symbols.append(Symbol(child.name, q, kind, f"{kind} {child.name}", path,
                                      child.lineno, child.end_lineno or child.lineno, parent,
                                      "python", ast.get_docstring(child) or "",
                                      hashlib.blake2b(body.encode()).hexdigest()))  # fmt: skip
                if isinstance(child, ast.ClassDef):
                    bases.extend(Base(q, ast.unparse(b), path, child.lineno) for b in child.bases)
                visit(child, q, isinstance(child, ast.ClassDef))
                continue
            if isinstance(child, ast.Call):
                f = child.func
                if isinstance(f, ast.Name):
                    calls.append(Callsite(parent, f.id, "call", None, None, path, child.lineno))
                elif isinstance(f, ast.Attribute):
                    calls.append(Callsite(parent, f.attr, "member", ast.unparse(f.value), None,
                                          path, child.lineno))  # fmt: skip
            elif isinstance(child, ast.Import):
                imports.extend(Import(a.name, None, a.asname, path, child.lineno)
                               for a in child.names)  # fmt: skip
            elif isinstance(child, ast.ImportFrom):
                imports.extend(Import(child.module or "", a.name, a.asname, path, child.lineno)
                               for a in child.names)  # fmt: skip
            visit(child, parent, in_class)

    visit(tree, module, False)
    return FileExtract(path, "python", digest, lines, tuple(symbols), tuple(calls),
                       tuple(imports), tuple(bases))  # fmt: skip


@pytest.fixture
def python_extractor() -> tuple[Callable[..., FileExtract], Callable[[str], str | None]]:
    """``(extract, language_for)`` for Python files."""
    return py_extract, language_for


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def git_repo(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """``git_repo(files)``: a new git repository holding ``files`` (path → text or bytes),
    all committed."""

    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        root.mkdir()
        git(root, "init", "-q")
        git(root, "config", "user.email", "t@example.com")
        git(root, "config", "user.name", "t")
        write(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "first")
        return root

    return make


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body)


@pytest.fixture
def git_in() -> Callable[..., str]:
    """``git_in(root, *args)``: git's output in ``root``."""
    return git


@pytest.fixture
def write_files() -> Callable[[Path, dict[str, str | bytes]], None]:
    return write

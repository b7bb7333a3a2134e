"""Python: modules named by their path, functions, classes and methods, calls, imports, bases."""

from __future__ import annotations

import inspect
from pathlib import PurePosixPath

from chitta.code.extract.core import (
    Call,
    Context,
    Definition,
    Node,
    Scope,
    Spec,
    computed_call,
    content_hash,
    expression,
    identifiers,
    lines_of,
    one_line,
)
from chitta.code.model import Symbol

#: Folders a package tree sits under: a module's name starts after the last of them.
_ROOTS = ("src", "lib", "site-packages", "dist-packages")


def module_name(path: str) -> str:
    """``src/a/b.py`` -> ``a.b``, ``a/__init__.py`` -> ``a`` (after the last source root)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    roots = [i for i, part in enumerate(parts[:-1]) if part in _ROOTS]
    if roots:
        parts = parts[roots[-1] + 1 :]
    if len(parts) > 1 and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(part for part in parts if part not in (".", "..")) or parts[-1]


def _docstring(body: Node | None, ctx: Context) -> str:
    first = body.named_children[0] if body is not None and body.named_child_count else None
    if first is None or first.type != "expression_statement" or not first.named_child_count:
        return ""
    string = first.named_children[0]
    if string.type != "string":
        return ""
    content = "".join(ctx.text(c) for c in string.named_children if c.type == "string_content")
    return inspect.cleandoc(content)


def _definition(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    outer = (
        node.parent
        if node.parent is not None and node.parent.type == "decorated_definition"
        else node
    )
    if node.type == "class_definition":
        kind = "class"
        for base in _bases(node.child_by_field_name("superclasses"), ctx):
            ctx.add_base(node, _qualified(scope, ctx.text(name)), base)
    else:
        kind = "method" if scope.kind == "class" else "function"
    params = frozenset(identifiers(node.child_by_field_name("parameters"))) - {"self", "cls"}
    return Definition(ctx.text(name), kind, outer, body, node, None, _docstring(body, ctx), params)


def _qualified(scope: Scope, name: str) -> str:
    return f"{scope.prefix}.{name}" if scope.prefix else name


def _bases(arguments: Node | None, ctx: Context) -> list[str]:
    if arguments is None:
        return []
    kept = ("identifier", "attribute", "subscript")
    texts = [ctx.text(a) for a in arguments.named_children if a.type in kept]
    return [text.split("[", 1)[0] for text in texts]


def _call(node: Node, ctx: Context) -> Call | None:
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        return Call(ctx.text(function), "call")
    if function.type == "attribute":
        attribute = function.child_by_field_name("attribute")
        receiver = function.child_by_field_name("object")
        return Call(ctx.text(attribute), "member", expression(receiver, ctx))
    return computed_call(function, ctx, ("lambda",))


def _dotted(node: Node, ctx: Context) -> str:
    return ctx.text(node).replace(" ", "")


def _import(node: Node, scope: Scope, ctx: Context) -> None:
    for child in node.children_by_field_name("name"):
        target, alias = child, None
        if child.type == "aliased_import":
            target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
        module = _dotted(target, ctx)
        alias_text = ctx.text(alias) if alias is not None else None
        ctx.modules.add(alias_text or module.split(".", 1)[0])
        ctx.add_import(child, module, None, alias_text)


def _absolute(relative: str, package: str) -> str:
    """``from ..a import b`` in package ``p.q`` reads ``p.a``."""
    dots = len(relative) - len(relative.lstrip("."))
    base = package.split(".")
    base = base[: len(base) - (dots - 1)] if dots > 1 else base
    rest = relative[dots:]
    return ".".join([*base, rest] if rest else base)


def _import_from(node: Node, scope: Scope, ctx: Context) -> None:
    module_node = node.child_by_field_name("module_name")
    module = _dotted(module_node, ctx) if module_node is not None else ""
    if module.startswith("."):
        package = module_name(ctx.path)
        if not ctx.path.endswith("__init__.py"):
            package = package.rpartition(".")[0]
        module = _absolute(module, package) if package else module
    names = node.children_by_field_name("name")
    if any(child.type == "wildcard_import" for child in node.children):
        ctx.add_import(node, module, "*", None)
    for child in names:
        target, alias = child, None
        if child.type == "aliased_import":
            target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
        ctx.add_import(child, module, _dotted(target, ctx), ctx.text(alias) if alias else None)


def _file_scope(root: Node, ctx: Context) -> tuple[Symbol | None, Scope]:
    name = module_name(ctx.path)
    start, end = lines_of(root)
    module = Symbol(
        name=name.rpartition(".")[2],
        qualified=name,
        kind="module",
        signature=one_line(f"module {name}"),
        path=ctx.path,
        start_line=1,
        end_line=max(end, start),
        parent=None,
        language=ctx.language,
        doc=_docstring(root, ctx),
        body_hash=content_hash(ctx.source),
    )
    return module, Scope(name, name, name)


SPEC = Spec(
    definitions={"function_definition": _definition, "class_definition": _definition},
    calls={"call": _call},
    others={"import_statement": _import, "import_from_statement": _import_from},
    file_scope=_file_scope,
)

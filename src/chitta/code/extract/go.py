"""Go: functions, methods (named under their receiver's type), structs and interfaces, under
the file's package; calls, ``pkg.F()`` on an imported package, composite literals, imports,
embedded types as bases."""

from __future__ import annotations

import re

from chitta.code.extract.core import (
    Call,
    Context,
    Definition,
    Node,
    Scope,
    Spec,
    computed_call,
    expression,
    identifiers,
)
from chitta.code.model import Symbol

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}
_NAMED_TYPES = frozenset({"type_identifier", "qualified_type", "generic_type"})


def _params(node: Node) -> frozenset[str]:
    return frozenset(identifiers(node.child_by_field_name("parameters")))


def _function(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    body = node.child_by_field_name("body")
    return Definition(ctx.text(name), "function", node, body, params=_params(node))


def _receiver_type(receiver: Node | None, ctx: Context) -> str:
    """``(w *withStack[T])`` -> ``withStack``."""
    text = ctx.text(receiver).strip("()").split()
    return re.sub(r"[\[*].*$", "", text[-1].lstrip("*")) if text else ""


def _method(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    type_name = _receiver_type(node.child_by_field_name("receiver"), ctx)
    if name is None or not type_name:
        return None
    parent = f"{scope.prefix}.{type_name}" if scope.prefix else type_name
    params = _params(node) | identifiers(node.child_by_field_name("receiver"))
    body = node.child_by_field_name("body")
    return Definition(ctx.text(name), "method", node, body, None, parent, params=params)


def _type_spec(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    type_ = node.child_by_field_name("type")
    if name is None or type_ is None or type_.type not in _TYPE_KINDS:
        return None
    qualified = f"{scope.prefix}.{ctx.text(name)}" if scope.prefix else ctx.text(name)
    for embedded in _embedded(type_):
        ctx.add_base(embedded, qualified, re.sub(r"[\[].*$", "", ctx.text(embedded).lstrip("*")))
    # type T struct { … } alone in its declaration: the signature starts at ``type``.
    outer = node.parent if node.parent is not None and node.parent.named_child_count == 1 else node
    return Definition(ctx.text(name), _TYPE_KINDS[type_.type], node, None, outer)


def _embedded(type_: Node) -> list[Node]:
    """Embedded fields of a struct and embedded interfaces: Go's composition."""
    found = []
    for child in type_.named_children:
        if child.type == "field_declaration_list":
            for field in child.named_children:
                if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                    type_node = field.child_by_field_name("type")
                    found.extend([type_node] if type_node is not None else [])
        elif child.type == "type_elem":
            found.extend(c for c in child.named_children if c.type in _NAMED_TYPES)
    return found


def _method_elem(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None or scope.kind != "interface":
        return None
    return Definition(ctx.text(name), "method", node)


def _call(node: Node, ctx: Context) -> Call | None:
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        return Call(ctx.text(function), "call")
    if function.type == "selector_expression":
        field = function.child_by_field_name("field")
        operand = function.child_by_field_name("operand")
        return Call(ctx.text(field), "member", expression(operand, ctx))
    return computed_call(function, ctx, ("func_literal",))


def _literal(node: Node, ctx: Context) -> Call | None:
    type_ = node.child_by_field_name("type")
    if type_ is None or type_.type not in _NAMED_TYPES:
        return None  # a slice, map or array literal constructs no named type
    if type_.type == "generic_type":
        type_ = type_.child_by_field_name("type") or type_
    if type_.type == "qualified_type":
        package = ctx.text(type_.child_by_field_name("package"))
        return Call(ctx.text(type_.child_by_field_name("name")), "new", None, package)
    return Call(ctx.text(type_), "new")


def _package_name(path: str) -> str:
    """The name an import path is used by: its last part without a ``.vN`` or ``go-``."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if re.fullmatch(r"v[0-9]+", last) and "/" in path:
        last = path.rstrip("/").rsplit("/", 2)[-2]
    return re.sub(r"\.v[0-9]+$", "", last).removeprefix("go-").replace("-", "_")


def _import(node: Node, scope: Scope, ctx: Context) -> None:
    path = ctx.text(node.child_by_field_name("path")).strip('"`')
    name = node.child_by_field_name("name")
    alias = ctx.text(name) if name is not None else None
    if alias not in ("_", "."):
        ctx.modules.add(alias or _package_name(path))
    ctx.add_import(node, path, None, alias)


def _file_scope(root: Node, ctx: Context) -> tuple[Symbol | None, Scope]:
    clause = next((c for c in root.named_children if c.type == "package_clause"), None)
    name = ctx.text(clause.named_children[0]) if clause and clause.named_child_count else ""
    return None, Scope(name, None, name or ctx.path)


SPEC = Spec(
    definitions={
        "function_declaration": _function,
        "method_declaration": _method,
        "type_spec": _type_spec,
        "method_elem": _method_elem,
    },
    calls={"call_expression": _call, "composite_literal": _literal},
    others={"import_spec": _import},
    file_scope=_file_scope,
    wrappers=frozenset({"type_declaration"}),
    capital_types=False,
)

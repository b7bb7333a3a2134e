"""Java: classes, interfaces, enums, records, methods and constructors, named under the
file's package; method calls, ``new``, imports (static and on-demand too), extends/implements."""

from __future__ import annotations

from chitta.code.extract.core import (
    Call,
    Context,
    Definition,
    Node,
    Scope,
    Spec,
    expression,
    identifiers,
)
from chitta.code.model import Symbol

_TYPES = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
}


def _plain(text: str) -> str:
    """``List<T>`` -> ``List``; annotations dropped."""
    return text.split("<", 1)[0].split()[-1] if text.split() else text


def _type(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    qualified = f"{scope.prefix}.{ctx.text(name)}" if scope.prefix else ctx.text(name)
    for clause in node.named_children:
        if clause.type in ("superclass", "super_interfaces", "extends_interfaces"):
            for base in _type_list(clause):
                ctx.add_base(base, qualified, _plain(ctx.text(base)))
    return Definition(ctx.text(name), _TYPES[node.type], node, node.child_by_field_name("body"))


def _type_list(clause: Node) -> list[Node]:
    found = []
    for child in clause.named_children:
        found.extend(child.named_children if child.type == "type_list" else [child])
    return found


def _method(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    params = frozenset(identifiers(node.child_by_field_name("parameters")))
    body = node.child_by_field_name("body")
    return Definition(ctx.text(name), "method", node, body, params=params)


def _call(node: Node, ctx: Context) -> Call | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    receiver = node.child_by_field_name("object")
    if receiver is None:
        return Call(ctx.text(name), "call")
    return Call(ctx.text(name), "member", expression(receiver, ctx))


def _new(node: Node, ctx: Context) -> Call | None:
    type_ = node.child_by_field_name("type")
    if type_ is None:
        return None
    written = _plain(ctx.text(type_))
    qualifier, _, name = written.rpartition(".")
    return Call(name, "new", None, qualifier or None)


def _import(node: Node, scope: Scope, ctx: Context) -> None:
    target = next(
        (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
    )
    if target is None:
        return
    written = ctx.text(target)
    if any(child.type == "asterisk" for child in node.named_children):
        ctx.add_import(node, written, "*", None)
        return
    module, _, name = written.rpartition(".")
    ctx.types.add(name)
    ctx.add_import(node, module, name, None)


def _file_scope(root: Node, ctx: Context) -> tuple[Symbol | None, Scope]:
    package = next((c for c in root.named_children if c.type == "package_declaration"), None)
    name = ""
    if package is not None and package.named_child_count:
        name = ctx.text(package.named_children[0])
    return None, Scope(name, None, name or ctx.path)


SPEC = Spec(
    definitions={
        **dict.fromkeys(_TYPES, _type),
        "method_declaration": _method,
        "constructor_declaration": _method,
        "compact_constructor_declaration": _method,
    },
    calls={"method_invocation": _call, "object_creation_expression": _new},
    others={"import_declaration": _import},
    file_scope=_file_scope,
    comments=frozenset({"block_comment", "line_comment"}),
)

"""Rust: functions, methods (in ``impl`` and ``trait`` blocks, named under the type), structs,
enums, unions, traits, inline and declared modules; calls, ``a::b()``, method calls, struct
literals, ``use`` trees, trait implementations and supertraits as bases."""

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

_TYPES = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "mod_item": "module",
}


def _plain(text: str) -> str:
    """``&mut Foo<T>`` -> ``Foo``; ``a::B<T>`` -> ``a::B``."""
    return re.sub(r"<.*$", "", text.replace("&", "").replace("mut ", "").strip()).strip()


def _function(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    kind = "method" if scope.kind in ("impl", "trait") else "function"
    params = frozenset(identifiers(node.child_by_field_name("parameters")))
    return Definition(ctx.text(name), kind, node, node.child_by_field_name("body"), params=params)


def _type(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    if node.type == "trait_item":
        qualified = f"{scope.prefix}.{ctx.text(name)}" if scope.prefix else ctx.text(name)
        bounds = node.child_by_field_name("bounds")
        for bound in bounds.named_children if bounds is not None else []:
            if bound.type != "lifetime":
                ctx.add_base(bound, qualified, _plain(ctx.text(bound)))
    return Definition(ctx.text(name), _TYPES[node.type], node, node.child_by_field_name("body"))


def _impl(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    """``impl [Trait for] Type``: a scope named by the type (no symbol of its own)."""
    type_ = node.child_by_field_name("type")
    if type_ is None:
        return None
    name = _plain(ctx.text(type_)).rsplit("::", 1)[-1]
    trait = node.child_by_field_name("trait")
    if trait is not None:
        child = f"{scope.prefix}.{name}" if scope.prefix else name
        ctx.add_base(trait, child, _plain(ctx.text(trait)))
    return Definition(name, "impl", node)


def _callee(function: Node, ctx: Context) -> Call:
    kind = function.type
    if kind == "generic_function":
        inner = function.child_by_field_name("function")
        return _callee(inner, ctx) if inner is not None else Call(ctx.text(function), "call")
    if kind == "identifier":
        return Call(ctx.text(function), "call")
    if kind == "scoped_identifier":
        path = function.child_by_field_name("path")
        name = ctx.text(function.child_by_field_name("name"))
        return Call(name, "qualified", None, ctx.text(path) if path is not None else None)
    if kind == "field_expression":
        field = ctx.text(function.child_by_field_name("field"))
        return Call(field, "member", expression(function.child_by_field_name("value"), ctx))
    return computed_call(function, ctx, ("closure_expression",))


def _call(node: Node, ctx: Context) -> Call | None:
    function = node.child_by_field_name("function")
    return _callee(function, ctx) if function is not None else None


def _struct_literal(node: Node, ctx: Context) -> Call | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    written = _plain(ctx.text(name))
    qualifier, _, last = written.rpartition("::")
    return Call(last, "new", None, qualifier or None)


def _use(node: Node, scope: Scope, ctx: Context) -> None:
    argument = node.child_by_field_name("argument")
    if argument is not None:
        _use_tree(argument, "", node, ctx)


def _join(prefix: str, path: str) -> str:
    return f"{prefix}::{path}" if prefix and path else prefix or path


def _use_tree(tree: Node, prefix: str, line: Node, ctx: Context) -> None:
    """One ``use`` tree: ``a::{b, c as d, e::*}`` is ``a``'s ``b``, ``c`` as ``d``, ``a::e``'s *."""
    kind = tree.type
    if kind == "scoped_use_list":
        path = tree.child_by_field_name("path")
        inner = _join(prefix, ctx.text(path) if path is not None else "")
        for item in (tree.child_by_field_name("list") or tree).named_children:
            _use_tree(item, inner, line, ctx)
    elif kind == "use_list":
        for item in tree.named_children:
            _use_tree(item, prefix, line, ctx)
    elif kind == "use_as_clause":
        module, _, name = _join(prefix, ctx.text(tree.child_by_field_name("path"))).rpartition("::")
        alias = ctx.text(tree.child_by_field_name("alias"))
        ctx.add_import(tree, module, name, alias)
    elif kind == "use_wildcard":
        target = tree.named_children[0] if tree.named_child_count else None
        ctx.add_import(tree, _join(prefix, ctx.text(target)), "*", None)
    elif kind == "self":
        ctx.add_import(tree, prefix, None, None)
    else:
        module, _, name = _join(prefix, ctx.text(tree)).rpartition("::")
        ctx.add_import(tree, module, name, None)


SPEC = Spec(
    definitions={
        "function_item": _function,
        "function_signature_item": _function,
        "impl_item": _impl,
        **dict.fromkeys(_TYPES, _type),
    },
    calls={"call_expression": _call, "struct_expression": _struct_literal},
    others={"use_declaration": _use},
    comments=frozenset({"line_comment", "block_comment"}),
    between=frozenset({"attribute_item"}),
    capital_types=False,
)

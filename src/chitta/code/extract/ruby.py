"""Ruby: classes, modules, methods and singleton methods; calls with and without a receiver,
``Foo.new``, ``require`` / ``require_relative`` as imports, superclasses and mixins as bases."""

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

_REQUIRES = frozenset({"require", "require_relative", "load", "autoload"})
_MIXINS = frozenset({"include", "extend", "prepend"})


def _container(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    written = ctx.text(name)
    # class A::B: named B, under A.
    outer, _, last = written.rpartition("::")
    prefix = ".".join(part for part in (scope.prefix, outer.replace("::", ".")) if part)
    kind = "class" if node.type == "class" else "module"
    if kind == "class":
        superclass = node.child_by_field_name("superclass")
        if superclass is not None and superclass.named_child_count:
            base = ctx.text(superclass.named_children[0])
            ctx.add_base(superclass, f"{prefix}.{last}" if prefix else last, base)
    parent = prefix if outer else None
    return Definition(last, kind, node, None, None, parent)  # signature: its first line


def _method(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    kind = (
        "method"
        if scope.kind in ("class", "module") or node.type == "singleton_method"
        else "function"
    )
    parameters = node.child_by_field_name("parameters")
    end = node.child_by_field_name("body")
    return Definition(ctx.text(name), kind, node, end, params=frozenset(identifiers(parameters)))


def _call(node: Node, ctx: Context) -> Call | None:
    method = node.child_by_field_name("method")
    receiver = node.child_by_field_name("receiver")
    if receiver is not None and receiver.type == "lambda":
        return Call("<lambda>", "lambda")
    if method is None:
        return Call(expression(receiver, ctx), "indirect") if receiver is not None else None
    name = ctx.text(method)
    if receiver is None:
        return Call(name, "call")
    if name == "new" and receiver.type in ("constant", "scope_resolution"):
        qualifier, _, type_name = ctx.text(receiver).rpartition("::")
        return Call(type_name, "new", None, qualifier or None)
    if receiver.type in ("constant", "scope_resolution"):
        return Call(name, "qualified", None, ctx.text(receiver))
    return Call(name, "member", expression(receiver, ctx))


def _requires_and_mixins(node: Node, scope: Scope, ctx: Context) -> None:
    method = node.child_by_field_name("method")
    arguments = node.child_by_field_name("arguments")
    if method is None or arguments is None or node.child_by_field_name("receiver") is not None:
        return
    name = ctx.text(method)
    first = arguments.named_children[0] if arguments.named_child_count else None
    if first is None:
        return
    if name in _REQUIRES and first.type == "string":
        ctx.add_import(node, ctx.text(first).strip("'\""), None, None)
    elif name in _MIXINS and scope.kind in ("class", "module"):
        for argument in arguments.named_children:
            if argument.type in ("constant", "scope_resolution"):
                ctx.add_base(argument, scope.prefix, ctx.text(argument))


SPEC = Spec(
    definitions={
        "class": _container,
        "module": _container,
        "method": _method,
        "singleton_method": _method,
    },
    calls={"call": _call},
    others={"call": _requires_and_mixins},
    capital_types=True,
)

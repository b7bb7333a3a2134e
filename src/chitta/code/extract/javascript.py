"""JavaScript, TypeScript and TSX: functions (declared, or arrow/function values bound to a
name), classes, methods, interfaces, enums, namespaces; calls, ``new``, imports (``import``
and ``require``), ``extends`` / ``implements``."""

from __future__ import annotations

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

_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CLASSES = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "class": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "internal_module": "module",
    "module": "module",
}


def _params(node: Node | None) -> frozenset[str]:
    return frozenset(identifiers(node))


def _function(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None or (node.type == "method_signature" and scope.kind == "class"):
        return None  # an overload's signature in a class: its definition follows
    kind = "method" if scope.kind in ("class", "interface") else "function"
    if node.type in ("method_definition", "method_signature", "abstract_method_signature"):
        kind = "method"
    params = _params(node.child_by_field_name("parameters"))
    return Definition(ctx.text(name), kind, node, node.child_by_field_name("body"), params=params)


def _bound(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    """``const f = () => …`` / ``x.f = function () …``: a function named by what it is bound to."""
    value = node.child_by_field_name("value" if node.type == "variable_declarator" else "right")
    target = node.child_by_field_name("name" if node.type == "variable_declarator" else "left")
    if value is None or target is None or value.type not in _FUNCTIONS:
        return None
    kind = "method" if scope.kind == "class" else "function"
    parent = None
    if target.type == "member_expression":
        owner = target.child_by_field_name("object")
        target = target.child_by_field_name("property")
        if (
            owner is not None
            and owner.type == "member_expression"
            and owner.text.endswith(b".prototype")
        ):
            # Foo.prototype.bar = function …: a method of Foo (ES5 classes).
            type_name = ctx.text(owner.child_by_field_name("object"))
            parent = f"{scope.prefix}.{type_name}" if scope.prefix else type_name
            kind = "method"
    if target is None or target.type not in ("identifier", "property_identifier"):
        return None
    head = node.parent if node.type == "variable_declarator" and node.parent else node
    parameters = value.child_by_field_name("parameters") or value.child_by_field_name("parameter")
    body = value.child_by_field_name("body")
    return Definition(ctx.text(target), kind, node, body, head, parent, params=_params(parameters))


def _type(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    qualified = f"{scope.prefix}.{ctx.text(name)}" if scope.prefix else ctx.text(name)
    for base in _heritage(node, ctx):
        ctx.add_base(node, qualified, base)
    return Definition(ctx.text(name), _CLASSES[node.type], node, node.child_by_field_name("body"))


def _heritage(node: Node, ctx: Context) -> list[str]:
    found: list[str] = []
    for child in node.named_children:
        if child.type == "class_heritage":
            clauses = child.named_children
            # JavaScript's class_heritage holds the expression itself.
            if clauses and clauses[0].type not in ("extends_clause", "implements_clause"):
                found.append(ctx.text(clauses[0]))
                continue
            for clause in clauses:
                found.extend(_type_names(clause, ctx))
        elif child.type == "extends_type_clause":
            found.extend(_type_names(child, ctx))
    return [base.split("<", 1)[0].strip() for base in found]


def _type_names(clause: Node, ctx: Context) -> list[str]:
    return [ctx.text(t) for t in clause.named_children if t.type not in ("type_arguments",)]


def _callee(function: Node, ctx: Context) -> Call:
    kind = function.type
    if kind == "identifier":
        return Call(ctx.text(function), "call")
    if kind == "member_expression":
        property_ = function.child_by_field_name("property")
        receiver = function.child_by_field_name("object")
        return Call(ctx.text(property_), "member", expression(receiver, ctx))
    return computed_call(function, ctx, _FUNCTIONS)


def _call(node: Node, ctx: Context) -> Call | None:
    function = node.child_by_field_name("function")
    if function is None or function.type == "import":
        return None
    return _callee(function, ctx)


def _new(node: Node, ctx: Context) -> Call | None:
    constructor = node.child_by_field_name("constructor")
    if constructor is None:
        return None
    if constructor.type == "member_expression":
        qualifier = expression(constructor.child_by_field_name("object"), ctx)
        return Call(ctx.text(constructor.child_by_field_name("property")), "new", None, qualifier)
    return Call(expression(constructor, ctx), "new")


def _string(node: Node | None, ctx: Context) -> str:
    return ctx.text(node).strip("'\"`") if node is not None else ""


def _import(node: Node, scope: Scope, ctx: Context) -> None:
    module = _string(node.child_by_field_name("source"), ctx)
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if clause is None:
        ctx.add_import(node, module, None, None)
        return
    for part in clause.named_children:
        if part.type == "identifier":
            ctx.add_import(part, module, "default", ctx.text(part))
        elif part.type == "namespace_import":
            alias = ctx.text(part.named_children[0]) if part.named_child_count else None
            if alias:
                ctx.modules.add(alias)
            ctx.add_import(part, module, "*", alias)
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                alias = spec.child_by_field_name("alias")
                name = ctx.text(spec.child_by_field_name("name"))
                ctx.add_import(spec, module, name, ctx.text(alias) if alias else None)


def _require(node: Node, scope: Scope, ctx: Context) -> None:
    """``const x = require('m')``: module ``m`` as ``x`` (a call, and an import)."""
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or ctx.text(function) != "require" or arguments is None:
        return
    first = arguments.named_children[0] if arguments.named_child_count else None
    if first is None or first.type != "string":
        return
    alias = None
    if node.parent is not None and node.parent.type == "variable_declarator":
        name = node.parent.child_by_field_name("name")
        if name is not None and name.type == "identifier":
            alias = ctx.text(name)
            ctx.modules.add(alias)
    ctx.add_import(node, _string(first, ctx), None, alias)


def _spec() -> Spec:
    definitions = {
        "function_declaration": _function,
        "generator_function_declaration": _function,
        "method_definition": _function,
        "method_signature": _function,
        "abstract_method_signature": _function,
        "variable_declarator": _bound,
        "assignment_expression": _bound,
        **dict.fromkeys(_CLASSES, _type),
    }
    return Spec(
        definitions=definitions,
        calls={"call_expression": _call, "new_expression": _new},
        others={"import_statement": _import, "call_expression": _require},
        wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
        between=frozenset({"decorator"}),
    )


SPECS = dict.fromkeys(("javascript", "typescript", "tsx"), _spec())

"""C and C++: functions, methods (in a class body, or ``A::m`` outside it), structs, unions,
enums, classes and namespaces; calls, member calls (``.`` and ``->``), ``ns::f()``, ``new``,
lambdas; ``#include`` and ``using`` as imports; C++ base classes."""

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

_DECLARATORS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    }
)
_NAMES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"}
)
_TYPES = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "class_specifier": "class",
}


def _declarator(node: Node) -> tuple[Node | None, Node | None]:
    """A function definition's name node and its parameter list, through pointers and parens."""
    current = node.child_by_field_name("declarator")
    parameters = None
    while current is not None and current.type in _DECLARATORS:
        if current.type == "function_declarator" and parameters is None:
            parameters = current.child_by_field_name("parameters")
        inner = current.child_by_field_name("declarator")
        current = inner if inner is not None else (current.named_children or [None])[0]
    return (current if current is not None and current.type in _NAMES else None), parameters


def _function(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name_node, parameters = _declarator(node)
    if name_node is None:
        return None
    written = ctx.text(name_node).replace(" ", "")
    outer, _, name = written.rpartition("::")
    params = frozenset(identifiers(parameters))
    body = node.child_by_field_name("body")
    if outer:
        # void A::m() { … } outside the class: a method of A.
        qualified_outer = outer.replace("::", ".")
        parent = f"{scope.prefix}.{qualified_outer}" if scope.prefix else qualified_outer
        return Definition(name, "method", node, body, None, parent, params=params)
    kind = "method" if scope.kind in ("class", "struct") else "function"
    return Definition(name, kind, node, body, params=params)


def _type(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    body = node.child_by_field_name("body")
    if body is None:
        return None  # a use or forward declaration, not a definition
    name = node.child_by_field_name("name")
    written = ctx.text(name) if name is not None else _typedef_name(node, ctx)
    if not written:
        return None
    qualified = f"{scope.prefix}.{written}" if scope.prefix else written
    for base in _bases(node):
        ctx.add_base(base, qualified, ctx.text(base).split("<", 1)[0].strip())
    return Definition(written, _TYPES[node.type], node, body)


def _typedef_name(node: Node, ctx: Context) -> str:
    """``typedef struct { … } Name;``: the anonymous struct is named by its typedef."""
    parent = node.parent
    if parent is None or parent.type != "type_definition":
        return ""
    declarator = parent.child_by_field_name("declarator")
    return (
        ctx.text(declarator)
        if declarator is not None and declarator.type == "type_identifier"
        else ""
    )


def _bases(node: Node) -> list[Node]:
    clause = next((c for c in node.named_children if c.type == "base_class_clause"), None)
    if clause is None:
        return []
    return [c for c in clause.named_children if c.type != "access_specifier"]


def _namespace(node: Node, scope: Scope, ctx: Context) -> Definition | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None  # an anonymous namespace names nothing
    written = ctx.text(name).replace("::", ".")
    return Definition(written, "module", node, node.child_by_field_name("body"))


def _callee(function: Node, ctx: Context) -> Call:
    kind = function.type
    if kind == "template_function":
        name = function.child_by_field_name("name")
        return _callee(name, ctx) if name is not None else Call(ctx.text(function), "call")
    if kind == "identifier":
        return Call(ctx.text(function), "call")
    if kind == "qualified_identifier":
        qualifier, _, name = ctx.text(function).replace(" ", "").rpartition("::")
        return Call(name.split("<", 1)[0], "qualified", None, qualifier)
    if kind == "field_expression":
        field = ctx.text(function.child_by_field_name("field"))
        return Call(field, "member", expression(function.child_by_field_name("argument"), ctx))
    if kind == "lambda_expression":
        return Call("<lambda>", "lambda")
    return Call(expression(function, ctx), "indirect")


def _call(node: Node, ctx: Context) -> Call | None:
    function = node.child_by_field_name("function")
    return _callee(function, ctx) if function is not None else None


def _new(node: Node, ctx: Context) -> Call | None:
    type_ = node.child_by_field_name("type")
    if type_ is None:
        return None
    qualifier, _, name = ctx.text(type_).split("<", 1)[0].replace(" ", "").rpartition("::")
    return Call(name, "new", None, qualifier or None)


def _include(node: Node, scope: Scope, ctx: Context) -> None:
    path = node.child_by_field_name("path")
    if path is not None:
        ctx.add_import(node, ctx.text(path).strip('<>"'), None, None)


def _using(node: Node, scope: Scope, ctx: Context) -> None:
    """``using namespace std;`` is std's *; ``using std::string;`` is std's string."""
    target = node.named_children[-1] if node.named_child_count else None
    if target is None:
        return
    written = ctx.text(target).replace(" ", "")
    if any(child.type == "namespace" for child in node.children):
        ctx.add_import(node, written, "*", None)
        return
    module, _, name = written.rpartition("::")
    ctx.add_import(node, module, name, None)


def _spec(cpp: bool) -> Spec:
    definitions = {"function_definition": _function, **dict.fromkeys(_TYPES, _type)}
    others = {"preproc_include": _include}
    calls = {"call_expression": _call}
    if cpp:
        definitions["namespace_definition"] = _namespace
        others["using_declaration"] = _using
        calls["new_expression"] = _new
    return Spec(
        definitions=definitions,
        calls=calls,
        others=others,
        wrappers=frozenset({"template_declaration", "type_definition"}),
        capital_types=False,
    )


SPECS = {"c": _spec(False), "cpp": _spec(True)}

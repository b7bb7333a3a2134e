"""Draft extractor: definitions and callsites per file, for proposing truth edges to review."""
import sys, json, re
from pathlib import Path
from tree_sitter import Language, Parser
import tree_sitter_python, tree_sitter_typescript, tree_sitter_go, tree_sitter_rust, tree_sitter_java

LANG = {
 "python": Language(tree_sitter_python.language()),
 "typescript": Language(tree_sitter_typescript.language_typescript()),
 "go": Language(tree_sitter_go.language()),
 "rust": Language(tree_sitter_rust.language()),
 "java": Language(tree_sitter_java.language()),
}
def txt(n): return n.text.decode() if n is not None else None

def strip_type(t):
    t = re.sub(r"<.*", "", t).lstrip("*&").strip()
    t = re.sub(r"\[.*", "", t)
    t = t.replace("mut ", "").strip()
    return t.split("::")[-1].split(".")[-1]

def defname(lang, n):
    """(name, kind) when n defines a named scope, else None."""
    t = n.type
    if lang == "python":
        if t == "function_definition": return txt(n.child_by_field_name("name")), "function"
        if t == "class_definition": return txt(n.child_by_field_name("name")), "class"
    if lang == "typescript":
        if t in ("function_declaration", "generator_function_declaration"): return txt(n.child_by_field_name("name")), "function"
        if t in ("class_declaration", "abstract_class_declaration", "class"):
            nm = n.child_by_field_name("name"); return (txt(nm), "class") if nm else None
        if t == "interface_declaration": return txt(n.child_by_field_name("name")), "interface"
        if t in ("method_definition", "method_signature", "abstract_method_signature"): return txt(n.child_by_field_name("name")), "method"
        if t == "variable_declarator":
            v = n.child_by_field_name("value")
            if v is not None and v.type in ("arrow_function", "function_expression", "function"):
                return txt(n.child_by_field_name("name")), "function"
        if t == "public_field_definition":
            v = n.child_by_field_name("value")
            if v is not None and v.type in ("arrow_function", "function_expression"):
                return txt(n.child_by_field_name("name")), "method"
    if lang == "go":
        if t == "function_declaration": return txt(n.child_by_field_name("name")), "function"
        if t == "method_declaration": return txt(n.child_by_field_name("name")), "method"
        if t == "type_spec": return txt(n.child_by_field_name("name")), "struct"
    if lang == "rust":
        if t == "function_item" or t == "function_signature_item": return txt(n.child_by_field_name("name")), "function"
        if t == "mod_item" and n.child_by_field_name("body") is None: return None  # `mod m;`
        if t in ("struct_item", "enum_item", "trait_item", "mod_item", "union_item"):
            return txt(n.child_by_field_name("name")), t.split("_")[0]
        if t == "impl_item":
            ty = re.sub(r"^(&\s*(mut\s+)?)+", "", txt(n.child_by_field_name("type")).strip())
            return (ty if ty.startswith("[") else strip_type(ty)), "impl"
    if lang == "java":
        if t in ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration"):
            return txt(n.child_by_field_name("name")), t.split("_")[0]
        if t in ("method_declaration", "constructor_declaration"): return txt(n.child_by_field_name("name")), "method"
    return None

def go_receiver(n):
    r = n.child_by_field_name("receiver")
    for p in r.named_children:
        ty = p.child_by_field_name("type")
        if ty is not None: return strip_type(txt(ty))

def call_of(lang, n):
    """(name, receiver, form) when n is a call."""
    t = n.type
    if lang == "python" and t == "call":
        f = n.child_by_field_name("function")
        if f.type == "identifier": return txt(f), None, "call"
        if f.type == "attribute": return txt(f.child_by_field_name("attribute")), txt(f.child_by_field_name("object")), "member"
        return None
    if lang == "typescript":
        if t == "call_expression":
            f = n.child_by_field_name("function")
            if f.type == "identifier": return txt(f), None, "call"
            if f.type == "member_expression": return txt(f.child_by_field_name("property")), txt(f.child_by_field_name("object")), "member"
            return None
        if t == "new_expression":
            c = n.child_by_field_name("constructor")
            if c is not None and c.type == "identifier": return txt(c), None, "new"
            return None
    if lang == "go" and t == "call_expression":
        f = n.child_by_field_name("function")
        if f.type == "identifier": return txt(f), None, "call"
        if f.type == "selector_expression": return txt(f.child_by_field_name("field")), txt(f.child_by_field_name("operand")), "member"
        if f.type == "generic_type" or f.type=="parenthesized_expression": return None
        return None
    if lang == "rust" and t == "call_expression":
        f = n.child_by_field_name("function")
        if f.type == "generic_function": f = f.child_by_field_name("function")
        if f.type == "identifier": return txt(f), None, "call"
        if f.type == "scoped_identifier": return txt(f.child_by_field_name("name")), txt(f.child_by_field_name("path")), "qualified"
        if f.type == "field_expression": return txt(f.child_by_field_name("field")), txt(f.child_by_field_name("value")), "member"
        return None
    if lang == "java":
        if t == "method_invocation":
            o = n.child_by_field_name("object")
            return txt(n.child_by_field_name("name")), txt(o), "member" if o is not None else "call"
        if t == "object_creation_expression":
            ty = n.child_by_field_name("type"); return strip_type(txt(ty)), None, "new"
        if t == "explicit_constructor_invocation":
            return None
    return None

def macro_calls(tt, scope, path, calls):
    """Calls written inside a Rust macro's token tree."""
    kids = tt.children
    for i, k in enumerate(kids):
        if k.type == "token_tree":
            macro_calls(k, scope, path, calls)
        nxt = kids[i + 1] if i + 1 < len(kids) else None
        if k.type == "identifier" and nxt is not None and nxt.type == "token_tree" and txt(nxt).startswith("("):
            prev = txt(kids[i - 1]) if i >= 1 else None
            recv, form = None, "call"
            if prev in (".", "::") and i >= 2:
                recv, form = txt(kids[i - 2]), "member" if prev == "." else "qualified"
            calls.append({"caller": ".".join(scope), "name": txt(k), "recv": recv, "form": form,
                          "path": path, "line": k.start_point[0] + 1, "macro": True})

def walk(lang, path, root, defs, calls):
    def rec(n, scope):
        d = defname(lang, n)
        if d and d[0]:
            name, kind = d
            if lang == "go" and n.type == "method_declaration":
                scope2 = scope + [go_receiver(n), name]
            elif kind == "impl":
                scope2 = scope + [name]
            else:
                scope2 = scope + [name]
            if kind != "impl":
                defs.append({"q": ".".join(scope2), "path": path, "line": n.start_point[0] + 1, "kind": kind,
                             "end": n.end_point[0] + 1})
            scope = scope2
        if lang == "rust" and n.type == "macro_invocation":
            # tree-sitter leaves a macro's arguments as tokens: `assert!(self.remaining() > 0)`
            # still calls remaining, so read `name(`, `recv.name(` and `path::name(` out of them
            for t in n.named_children:
                if t.type == "token_tree":
                    macro_calls(t, scope, path, calls)
        c = call_of(lang, n)
        if c and c[0]:
            calls.append({"caller": ".".join(scope), "name": c[0], "recv": c[1], "form": c[2], "path": path,
                          "line": n.start_point[0] + 1})
        for ch in n.children:
            rec(ch, scope)
    rec(root, [])

def main(lang, root, files, prefix_mod):
    defs, calls = [], []
    for f in files:
        src = (Path(root) / f).read_bytes()
        tree = Parser(LANG[lang]).parse(src)
        base = []
        if prefix_mod == "go":
            pc = [c for c in tree.root_node.children if c.type == "package_clause"][0]
            base = [txt(pc.named_children[0])]
        elif prefix_mod == "java":
            pc = [c for c in tree.root_node.children if c.type == "package_declaration"][0]
            base = [txt(pc.named_children[0])]
        elif prefix_mod:
            base = [f[:-3].replace("/", ".").removesuffix(".__init__")]
            if prefix_mod is True: defs.append({"q": base[0], "path": f, "line": 1, "kind": "module", "end": src.count(b"\n")})
        d0, c0 = [], []
        walk(lang, f, tree.root_node, d0, c0)
        for d in d0:
            d["q"] = ".".join(base + [d["q"]]) if base else d["q"]
            defs.append(d)
        for c in c0:
            c["caller"] = ".".join(base + ([c["caller"]] if c["caller"] else [])) if base else c["caller"]
            calls.append(c)
    json.dump({"defs": defs, "calls": calls}, sys.stdout, indent=0)

if __name__ == "__main__":
    lang, root, pm = sys.argv[1], sys.argv[2], {"1": True, "0": False}.get(sys.argv[3], sys.argv[3])
    main(lang, root, sys.argv[4:], pm)

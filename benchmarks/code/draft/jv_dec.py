"""Java verdicts (OpenJDK 17 java.util: AbstractCollection, AbstractList, ArrayList), from each
call's receiver type as declared (locals, parameters, fields), the corpus class hierarchy and
each method's modifiers; the sites the rules cannot read are decided by hand below (MANUAL)."""
import json, re, sys
from pathlib import Path
sys.path.insert(0, "/tmp/cb/tool2")
sys.path.insert(0, str(Path(__file__).parent))
from build import build
from ext import LANG, txt
from tree_sitter import Parser

ROOT = "/tmp/cb/jv/src"
FILES = open("/tmp/cb/jv/files").read().split()
PKG = "java.util."
props = json.load(open("/tmp/cb/jv/jv.prop.json"))
defs = {x["q"] for x in json.load(open("/tmp/cb/jv/jv.json"))["defs"]}

classes = {}  # qname -> {"super": simple or None, "ifaces": [...], "methods": {name: [(q, mods, body)]}, "fields": {}, "outer": q}
sites = {}  # (path, line, name, recv) -> (class stack, locals)


def simple(t):
    return re.sub(r"<.*", "", t or "").replace("[]", "[]").strip().split(".")[-1]


def mods(n):
    for c in n.children:
        if c.type == "modifiers":
            return set(txt(c).replace("\n", " ").split())
    return set()


def decls(n, out):
    """name -> declared type of every parameter and local in a method body."""
    if n.type in ("formal_parameter", "catch_formal_parameter", "enhanced_for_statement"):
        nm, ty = n.child_by_field_name("name"), n.child_by_field_name("type")
        if nm is not None and ty is not None:
            out[txt(nm)] = txt(ty)
    if n.type == "local_variable_declaration":
        ty = txt(n.child_by_field_name("type"))
        for d in n.children_by_field_name("declarator"):
            out[txt(d.child_by_field_name("name"))] = ty
    for c in n.children:
        if c.type not in ("class_body",):
            decls(c, out)


def walk(path, n, stack, scope, method):
    t = n.type
    if t in ("class_declaration", "interface_declaration"):
        q = ".".join(scope + [txt(n.child_by_field_name("name"))])
        sup = n.child_by_field_name("superclass")
        ifs = n.child_by_field_name("interfaces")
        classes[q] = {"super": simple(txt(sup.named_children[0])) if sup else None,
                      "ifaces": [simple(txt(x)) for x in ifs.named_children[0].named_children] if ifs else [],
                      "methods": {}, "fields": {}, "outer": stack[0] if stack else None, "mods": mods(n)}
        for c in n.child_by_field_name("body").children:
            walk(path, c, [q] + stack, scope + [txt(n.child_by_field_name("name"))], None)
        return
    if t == "object_creation_expression" and n.child_by_field_name("type") is not None and any(
        c.type == "class_body" for c in n.children
    ):  # an anonymous class: its methods are named under the enclosing method
        q = ".".join(scope)
        classes[q] = {"super": None, "ifaces": [simple(txt(n.child_by_field_name("type")))], "methods": {},
                      "fields": {}, "outer": stack[0], "mods": {"final"}}
        for c in n.children:
            if c.type == "class_body":
                for cc in c.children:
                    walk(path, cc, [q] + stack, scope, None)
            else:
                walk(path, c, stack, scope, method)
        return
    if t in ("method_declaration", "constructor_declaration"):
        nm = txt(n.child_by_field_name("name"))
        q = ".".join(scope + [nm])
        body = n.child_by_field_name("body") is not None
        classes[stack[0]]["methods"].setdefault(nm, []).append((q, mods(n), body))
        loc = {}
        decls(n, loc)
        for c in n.children:
            walk(path, c, stack, scope + [nm], loc)
        return
    if t == "field_declaration" and method is None:
        ty = txt(n.child_by_field_name("type"))
        for d in n.children_by_field_name("declarator"):
            classes[stack[0]]["fields"][txt(d.child_by_field_name("name"))] = ty
    if t == "method_invocation":
        o = n.child_by_field_name("object")
        sites[(path, n.start_point[0] + 1, txt(n.child_by_field_name("name")), txt(o))] = (stack, method or {}, o)
    if t == "object_creation_expression":
        sites[(path, n.start_point[0] + 1, simple(txt(n.child_by_field_name("type"))), None, "new")] = (stack, method or {}, None)
    for c in n.children:
        walk(path, c, stack, scope, method)


for f in FILES:
    tree = Parser(LANG["java"]).parse((Path(ROOT) / f).read_bytes())
    walk(f, tree.root_node, [], ["java", "util"], None)


def cls(name, stack):
    """The corpus class a simple name means where it is written: nested ones first."""
    for s in stack:
        for cand in (s + "." + name, (classes[s]["outer"] or "") + "." + name):
            if cand in classes:
                return cand
    return PKG + name if PKG + name in classes else None


def chain(q):
    out = []
    while q:
        out.append(q)
        sup = classes[q]["super"]
        q = cls(sup, [q]) if sup else None
    return out


def subclasses(q):
    return [c for c in classes if c != q and q in chain(c)]


def concrete(q, m):
    return [x for x in classes[q]["methods"].get(m, []) if x[2]]


def dispatch(q, m):
    """Target of a virtual call of m on a receiver whose static type is corpus class q."""
    for c in chain(q):
        ms = classes[c]["methods"].get(m)
        if ms:
            d = ms[0]
            if d[1] & {"private", "static", "final"} or "final" in classes[q]["mods"] and c == q:
                return "T:" + d[0]
            cands = [d[0]] if concrete(c, m) else []
            cands += [x[0] for s in subclasses(q) for x in concrete(s, m)[:1]]
            cands = sorted(set(cands))
            if len(cands) == 1:
                return "T:" + cands[0]
            return "U:" + ",".join(cands)
    return None


IFACE = {"Collection": "AbstractCollection", "List": "AbstractCollection", "AbstractCollection": "AbstractCollection",
         "Iterator": "Iterator", "ListIterator": "ListIterator", "Spliterator": "Spliterator", "Object": "*", "E": "*"}


def implementers(kind):
    out = []
    for c, v in classes.items():
        names = {simple(x.rsplit(".", 1)[-1]) for x in chain(c)} | set(v["ifaces"])
        for s in chain(c):
            names |= set(classes[s]["ifaces"])
        if kind == "*" or kind in names or kind == "Iterator" and "ListIterator" in names:
            out.append(c)
    return out


def through(ty, m):
    """A call on a receiver declared as an interface (or Object, or a type variable)."""
    cands = set()
    for c in implementers(IFACE[ty]):
        for s in chain(c):  # the implementation c has, its own or inherited (ListItr's next)
            if concrete(s, m):
                cands.add(concrete(s, m)[0][0])
                break
    cands = sorted(cands)
    if not cands:
        return f"X:{ty}.{m} outside the corpus: no corpus class implements it"
    return "U:" + ",".join(cands)


def on_type(ty, m, stack):
    s = simple(ty)
    if ty and ty.endswith("[]"):
        return f"X:a method of an array ({ty}), outside the corpus"
    q = cls(s, stack)
    if q:
        return dispatch(q, m) or f"X:{s}.{m} is inherited from outside the corpus"
    if s in IFACE:
        return through(s, m)
    return f"X:a method of {s}, outside the corpus"


def verdict(key, p):
    stack, loc, o = sites[key]
    m, r = p["name"], p["recv"]
    if r is None or r == "this":
        for s in stack:
            if any(m in classes[c]["methods"] for c in chain(s)):
                return dispatch(s, m)
        return f"X:{m} is not a method of the corpus classes around the call (a Collection/List default)"
    if r == "super":
        sup = cls(classes[stack[0]]["super"], stack)
        d = dispatch(sup, m) if sup else None
        for c in chain(sup):
            ms = concrete(c, m)
            if ms:
                return "T:" + ms[0][0]  # super.m() is bound statically
        return d or f"X:super.{m}() is Object's, outside the corpus"
    if r.endswith(".this"):
        return dispatch(cls(r[:-5], stack), m)
    if o is not None and o.type == "identifier":
        if r in loc:
            return on_type(loc[r], m, stack)
        for s in stack:
            for c in chain(s):
                if r in classes[c]["fields"]:
                    return on_type(classes[c]["fields"][r], m, stack)
        q = cls(r, stack)
        if q:
            return dispatch(q, m)
        if r[0].isupper():
            return f"X:a static method of {r}, outside the corpus"
    if o is not None and o.type == "field_access":
        f = txt(o.child_by_field_name("field"))
        for s in stack:
            for c in chain(s):
                if f in classes[c]["fields"]:
                    return on_type(classes[c]["fields"][f], m, stack)
    if o is not None and o.type == "parenthesized_expression" and o.named_children[0].type == "cast_expression":
        return on_type(txt(o.named_children[0].child_by_field_name("type")), m, stack)  # ((T) x).m()
    if o is not None and o.type == "method_invocation":  # a chain: read its base's type
        base = o
        while base is not None and base.type == "method_invocation":
            base = base.child_by_field_name("object")
        if base is not None and base.type == "identifier" and txt(base) in loc:
            s = simple(loc[txt(base)])
            if not cls(s, stack) and s not in IFACE:
                return f"X:a method of what {s}.{txt(o.child_by_field_name('name'))}() returns, outside the corpus"
    return None


MANUAL = {  # `var oit = other.iterator()` with other: List<?>: an Iterator
    ("ArrayList.java", 543, "next"): "IT", ("ArrayList.java", 543, "hasNext"): "IT",
    ("ArrayList.java", 547, "hasNext"): "IT",
}
dec = {}
for i, p in enumerate(props):
    if p["form"] == "new":
        key = (p["path"], p["line"], p["name"], None, "new")
        stack = sites[key][0]
        q = cls(p["name"], stack)
        dec[i] = "T:" + q if q else f"X:new {p['name']}: a class outside the corpus"
        continue
    key = (p["path"], p["line"], p["name"], p["recv"])
    v = MANUAL.get((p["path"].split("/")[-1], p["line"], p["name"]))
    v = through("Iterator", p["name"]) if v == "IT" else v or verdict(key, p)
    if v is None:
        raise SystemExit(f"undecided {i}: {p['path']}:{p['line']} {p['recv']}.{p['name']} in {p['caller']}: {p['src']}")
    dec[i] = v

corpus = {"registry": "debian", "package": "openjdk-17-source", "version": "17.0.21.1+2-1~deb12u1",
          "archive": "openjdk-17-source_17.0.21.1+2-1~deb12u1_all.deb",
          "inner_zip": "usr/lib/jvm/openjdk-17/lib/src.zip", "root": "usr/lib/jvm/openjdk-17/lib/src",
          "fetch": "apt-get download openjdk-17-source=17.0.21.1+2-1~deb12u1 && dpkg-deb -x the .deb . "
                   "&& unzip usr/lib/jvm/openjdk-17/lib/src.zip <files> -d usr/lib/jvm/openjdk-17/lib/src",
          "files": FILES}
out = build("java", "/tmp/cb/jv/jv.prop.json", "/tmp/cb/jv/jv.json", ROOT, corpus, dec)
json.dump(out, open(sys.argv[1], "w"), indent=1)
if len(sys.argv) > 2:
    for i, p in enumerate(props):
        print(i, f"{p['path'].split('/')[-1]}:{p['line']}", p["caller"].replace(PKG, ""), f"{p['recv']}.{p['name']}", "=>", dec[i].replace(PKG, ""), "|", p["src"][:60])
from collections import Counter
print(Counter(e["kind"] for e in out["edges"]), len({(e["caller"], e["callee"]) for e in out["edges"] if e["kind"] == "true"}))

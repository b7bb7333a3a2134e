"""Propose a target for every callsite whose name some corpus definition has; print for review."""
import json, sys
from pathlib import Path
from collections import defaultdict
lang, js, root = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(js))
defs = d["defs"]
by_last = defaultdict(list)
for x in defs:
    by_last[x["q"].split(".")[-1]].append(x)
qset = {x["q"] for x in defs}
SELF = {"python": ("self", "cls"), "typescript": ("this",), "java": ("this",), "rust": ("self", "Self"), "go": ()}[lang]
lines = {}
def src(p, l):
    if p not in lines: lines[p] = (Path(root) / p).read_text().splitlines()
    return lines[p][l - 1].strip()
out = []
for c in d["calls"]:
    cands = [x["q"] for x in by_last.get(c["name"], []) if x["kind"] != "module"]
    cands = sorted(set(cands))
    if not cands: continue
    parts = c["caller"].split(".")
    prop = None
    # enclosing class member
    if c["recv"] in SELF or (lang == "java" and c["form"] == "call"):
        for i in range(len(parts) - 1, 0, -1):
            q = ".".join(parts[:i] + [c["name"]])
            if q in qset: prop = q; break
    if prop is None and c["form"] in ("call", "new") :
        # same scope chain, then unique
        for i in range(len(parts), -1, -1):
            q = ".".join(parts[:i] + [c["name"]])
            if q in qset and q != c["caller"] or (q == c["caller"] and q in qset and False): prop = q; break
        if prop is None and len(cands) == 1: prop = cands[0]
    if prop is None and c["form"] == "qualified" and c["recv"] in ("Self",):
        pass
    if prop is None and len(cands) == 1 and c["form"] == "qualified": prop = cands[0]
    out.append({**c, "prop": prop, "cands": cands, "src": src(c["path"], c["line"])})
json.dump(out, open(js.replace(".json", ".prop.json"), "w"), indent=0)
for i, o in enumerate(out):
    print(f"{i}|{o['path'].split('/')[-1]}:{o['line']}|{o['caller']}|{o['recv']}.{o['name']}|P={o['prop']}|C={','.join(o['cands'][:6])}{'...' if len(o['cands'])>6 else ''}|{o['src'][:110]}")

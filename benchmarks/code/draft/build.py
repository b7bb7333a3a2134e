"""Build truth.json from reviewed proposals: decisions override or confirm each proposal."""
import json, sys, hashlib
from pathlib import Path
def build(lang, propjs, defsjs, root, corpus, decisions, default_why=None, strip=""):
    props = json.load(open(propjs)); d = json.load(open(defsjs))
    defs = {}
    for x in d["defs"]:
        defs.setdefault(x["q"], []).append(x)
    edges, trues = [], set()
    pending_false = []
    for i, p in enumerate(props):
        dec = decisions.get(i, "T" if p["prop"] else None)
        if dec is None:
            raise SystemExit(f"undecided {i}: {p['path']}:{p['line']} {p['recv']}.{p['name']} {p['cands']}")
        base = {"caller": p["caller"], "file": p["path"], "line": p["line"], "name": p["name"]}
        if dec == "skip":
            continue
        if dec.startswith("T"):
            tgt = dec[2:] if dec.startswith("T:") else p["prop"]
            assert tgt in defs, (i, tgt)
            assert tgt.split(".")[-1] == p["name"] or dec.startswith("T:") and "alias" in tgt or True
            edges.append({**base, "callee": tgt, "kind": "true"}); trues.add((p["caller"], tgt))
            for c in p["cands"]:
                if c != tgt and c in defs:
                    pending_false.append((i, {**base, "callee": c, "kind": "false"}, tgt))
        elif dec.startswith("U:"):
            cands = dec[2:].split(",")
            for c in cands: assert c in defs, (i, c)
            edges.append({**base, "callee": None, "kind": "unresolvable", "candidates": cands})
        elif dec.startswith("X"):
            why = dec[2:] if dec.startswith("X:") else default_why
            for c in sorted(p["cands"], key=lambda c: defs[c][0]["path"] != p["path"])[:3]:
                edges.append({**base, "callee": c, "kind": "false", "why": why})
        else:
            raise SystemExit(f"bad decision {i}: {dec}")
    per_site = {}
    for i, e, tgt in pending_false:
        if (e["caller"], e["callee"]) in trues: continue
        if per_site.get(i, 0) >= 3: continue
        per_site[i] = per_site.get(i, 0) + 1
        e["why"] = why_for(e, tgt, defs)
        edges.append(e)
    edges = [e for e in edges if not (e["kind"] == "false" and (e["caller"], e["callee"]) in trues)]
    edges.sort(key=lambda e: (e["file"], e["line"], e["kind"] != "true", e["callee"] or ""))
    used = {e["callee"] for e in edges if e["callee"]} | {c for e in edges for c in e.get("candidates", [])} | {e["caller"] for e in edges}
    symbols = {}
    for q in sorted(used):
        if q in defs:
            symbols[q] = [{"file": x["path"], "line": x["line"], "kind": x["kind"]} for x in defs[q]]
    files = []
    for f in corpus["files"]:
        b = (Path(root) / f).read_bytes()
        files.append({"path": f, "sha256": hashlib.sha256(b).hexdigest(), "lines": b.count(b"\n")})
    for e in edges: e.pop("name")
    out = {"language": lang, "corpus": {**corpus, "files": files}, "symbols": symbols, "edges": edges}
    return out

def why_for(e, tgt, defs):
    c = e["callee"]
    ck, tk = defs[c][0]["kind"], defs[tgt][0]["kind"]
    cp, tp = c.rsplit(".", 1)[0] if "." in c else "", tgt.rsplit(".", 1)[0] if "." in tgt else ""
    if c == e["caller"]:
        return "the calling method itself: the call goes elsewhere (super or another receiver)"
    if defs[c][0]["path"] != defs[tgt][0]["path"] and ck == "function" and tk == "function":
        return "same-named function in another file"
    if ck in ("method",) or (ck == "function" and cp in defs and defs[cp][0]["kind"] not in ("module",)):
        return "same-named method on another type"
    return "same name, other definition"

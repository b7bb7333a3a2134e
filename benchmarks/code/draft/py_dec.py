import json, sys
sys.path.insert(0, "/tmp/cb/tool")
from build import build
props = json.load(open("/tmp/cb/py.prop.json"))
V = "packaging.version."; S = "packaging.specifiers."; TK = "packaging._tokenizer.Tokenizer."; PA = "packaging._parser."
dec = {}
for i, op in zip((35, 38, 44, 47, 50), ("__lt__", "__le__", "__ge__", "__gt__", "__ne__")):
    dec[i] = "T:" + V + "_BaseVersion." + op
dec[41] = "T:" + V + "_BaseVersion.__eq__"
dec[51] = dec[53] = "U:" + V + "_deprecated"
dec[54] = "T:" + S + "Specifier._require_spec_version"
dec[68] = dec[320] = "T:" + V + "Version._trim_release"
dec[86] = dec[308] = dec[310] = "T:" + S + "SpecifierSet._canonical_specs"
dec[87] = "T:" + S + "Specifier._to_ranges"
dec[88] = "T:" + S + "Specifier._to_intervals"
dec[92] = dec[109] = dec[258] = "T:" + S + "Specifier.contains"
for i in (94, 98, 102):
    dec[i] = "X:method of ranges.VersionRange (outside the corpus), the type to_range() returns"
for i in (96, 100, 104):
    dec[i] = "T:" + S + "SpecifierSet.to_range"
dec[113] = "X:super() is Exception: a builtin, outside the corpus"
for i in (237, 238, 300, 301):
    dec[i] = "X:super() is ValueError: a builtin, outside the corpus"
for i, p in enumerate(props):
    if p["recv"] == "tokenizer" and p["path"].endswith("_parser.py"):
        dec[i] = "T:" + TK + p["name"]   # every caller annotates tokenizer: Tokenizer
dec[247] = dec[249] = "U:" + PA + "Variable.serialize," + PA + "Value.serialize"
for i in (248, 254, 256, 274):
    dec[i] = "T:" + PA + "Op.serialize"
dec[278] = dec[279] = "X:a function of the stdlib platform module"
dec[285] = dec[289] = "T:" + PA + "parse_marker"
dec[302] = "T:" + PA + "parse_requirement"
files = ["packaging/version.py", "packaging/specifiers.py", "packaging/_tokenizer.py", "packaging/_parser.py",
         "packaging/markers.py", "packaging/requirements.py", "packaging/utils.py"]
corpus = {"registry": "pypi", "package": "packaging", "version": "26.4",
          "fetch": "pip download --no-deps --no-binary :all: packaging==26.4",
          "archive": "packaging-26.4.tar.gz", "root": "packaging-26.4/src", "files": files}
out = build("python", "/tmp/cb/py.prop.json", "/tmp/cb/py.json", "/tmp/cb/x/packaging-26.4/src", corpus, dec)
# the import aliases: the name is imported under another function's name
for e in out["edges"]:
    if e["kind"] == "false" and e["callee"] in (PA + "_parse_marker", PA + "_parse_requirement") and e["file"] != "packaging/_parser.py":
        e["why"] = "shadowed import: the called name is an alias (import ... as) of another function"
alias_sites = {(e["file"], e["line"]) for e in out["edges"] if e["callee"] in (PA + "parse_marker", PA + "parse_requirement")}
for e in list(out["edges"]):
    if (e["file"], e["line"]) in alias_sites and e["kind"] == "true" and e["callee"] in (PA + "parse_marker", PA + "parse_requirement"):
        wrong = PA + "_" + e["callee"].split(".")[-1]
        if not any(x["callee"] == wrong and x["line"] == e["line"] and x["file"] == e["file"] for x in out["edges"]):
            out["edges"].append({"caller": e["caller"], "file": e["file"], "line": e["line"], "callee": wrong, "kind": "false",
                                 "why": "shadowed import: the called name is an alias (import ... as) of another function"})
            out["symbols"].setdefault(wrong, [{"file": "packaging/_parser.py", "line": 0, "kind": "function"}])
out["edges"].sort(key=lambda e: (e["file"], e["line"], e["kind"] != "true", e["callee"] or ""))
json.dump(out, open(sys.argv[1], "w"), indent=1)
from collections import Counter
print(Counter(e["kind"] for e in out["edges"]), len({(e["caller"], e["callee"]) for e in out["edges"] if e["kind"] == "true"}))

import json, sys
sys.path.insert(0, "/tmp/cb/tool")
from build import build
props = json.load(open("/tmp/cb/go.prop.json"))
S = "strings."; O = "sort."
LESS = ",".join(O + t + ".Less" for t in ("Float64Slice", "IntSlice", "StringSlice", "reverse"))
SWAP = ",".join(O + t + ".Swap" for t in ("Float64Slice", "IntSlice", "StringSlice"))
LEN = ",".join(O + t + ".Len" for t in ("Float64Slice", "IntSlice", "StringSlice"))
SW = ",".join(S + t + ".WriteString" for t in ("Builder", "appendSliceWriter", "stringWriter"))
W = ",".join(S + t + ".Write" for t in ("Builder", "appendSliceWriter"))
IMPL = ("genericReplacer", "byteReplacer", "byteStringReplacer", "singleStringReplacer")
dec = {}
for i, p in enumerate(props):
    f, r, n = p["path"], p["recv"], p["name"]
    if p["prop"] is None:
        if r in ("b", "buf") and (f.endswith("strings.go") or f.endswith("builder.go") or p["caller"] == S + "singleStringReplacer.Replace"):
            dec[i] = "T:" + S + "Builder." + n  # var b Builder / receiver b *Builder / var buf Builder
        elif r == "sw":
            dec[i] = "U:" + SW  # sw := getStringWriter(w): an io.StringWriter
        elif r in ("w", "w.w") and n == "Write":
            dec[i] = "U:" + W  # an io.Writer parameter or field
        elif r == "data" and f.endswith("zsortfunc.go"):
            dec[i] = "X:calls a func-typed field of lessSwap, not a method"
        elif r in ("data", "r.Interface") and n in ("Less", "Swap", "Len"):
            dec[i] = "U:" + {"Less": LESS, "Swap": SWAP, "Len": LEN}[n]  # through sort.Interface
        elif r in ("bits",):
            dec[i] = "X:a function of package math/bits"
        elif r == "rv":
            dec[i] = "X:reflect.Value.Len, outside the corpus"
        elif r == "io":
            dec[i] = "X:a function of package io"
        elif r == "unicode":
            dec[i] = "X:a function of package unicode"
        elif r == "random":
            dec[i] = "T:" + O + "xorshift.Next"
        elif r == "as":
            dec[i] = "T:" + S + "asciiSet.contains"
        elif n == "add":
            dec[i] = "T:" + S + "trieNode.add"
        elif r == "r.finder":
            dec[i] = "T:" + S + "stringFinder.next"
        elif r == "r" and n == "build":
            dec[i] = "T:" + S + "Replacer.build"
        elif r == "r" and n == "lookup":
            dec[i] = "T:" + S + "genericReplacer.lookup"
        elif r == "r" and n == "WriteString" and p["caller"] == S + "genericReplacer.Replace":
            dec[i] = "T:" + S + "genericReplacer.WriteString"
        elif r == "r.r":
            dec[i] = "U:" + ",".join(S + t + "." + n for t in IMPL)  # the replacer interface
    elif p["prop"] in (O + "IntSlice", O + "Float64Slice", O + "StringSlice", O + "xorshift"):
        dec[i] = "X:a type conversion T(x), not a call"
files = ["strings/builder.go", "strings/clone.go", "strings/compare.go", "strings/reader.go", "strings/replace.go",
         "strings/search.go", "strings/strings.go", "sort/sort.go", "sort/search.go", "sort/slice.go",
         "sort/zsortinterface.go", "sort/zsortfunc.go"]
corpus = {"registry": "debian", "package": "golang-1.19-src", "version": "1.19.8-2",
          "fetch": "apt-get download golang-1.19-src=1.19.8-2 && dpkg-deb -x golang-1.19-src_1.19.8-2_all.deb .",
          "archive": "golang-1.19-src_1.19.8-2_all.deb", "root": "usr/share/go-1.19/src", "files": files}
out = build("go", "/tmp/cb/go.prop.json", "/tmp/cb/go.json", "/tmp/cb/x/golang-1.19-src/usr/share/go-1.19/src", corpus, dec)
json.dump(out, open(sys.argv[1], "w"), indent=1)
from collections import Counter
print(Counter(e["kind"] for e in out["edges"]), len({(e["caller"], e["callee"]) for e in out["edges"] if e["kind"] == "true"}))

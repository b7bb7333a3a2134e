"""Rust verdicts (semver 1.0.14 and bytes 1.2.1's buf module), given site by site after reading
each call with its receiver's declared type. Every site gets an explicit verdict here."""
import json, sys
sys.path.insert(0, "/tmp/cb/tool2")
from build import build
props = json.load(open("/tmp/cb/rs2/rs.prop.json"))
defs = {x["q"] for x in json.load(open("/tmp/cb/rs2/rs.json"))["defs"]}
# the trait methods without a body: a call through a generic or `Self` goes to an implementor
REQUIRED = {"remaining", "chunk", "advance", "remaining_mut", "chunk_mut", "advance_mut"}
BUF = ("Chain", "Cursor", "Take", "VecDeque", "[u8]")  # the written `impl Buf for` types
BUFMUT = ("Chain", "Vec", "[u8]")  # the written `impl BufMut for` types
BUF_M = {"remaining", "chunk", "advance", "chunks_vectored", "copy_to_bytes", "has_remaining", "take"}
BUFMUT_M = {"remaining_mut", "chunk_mut", "advance_mut", "put_slice", "put_bytes", "put", "has_remaining_mut"}
STD = "X:a method of a std type ({}), outside the corpus"


def trait_call(n):
    """A call of a Buf/BufMut method on `self` in a default method, or on a generic `T: Buf`."""
    trait, impls = ("Buf", BUF) if n in BUF_M else ("BufMut", BUFMUT)
    cands = [t + "." + n for t in impls if t + "." + n in defs]
    if n not in REQUIRED:
        if not cands:  # a default method no written impl overrides: it is the target
            return "T:" + trait + "." + n
        cands = [trait + "." + n] + cands
    return "U:" + ",".join(cands)


def verdict(i, p):
    f, r, n, c = p["path"], p["recv"], p["name"], p["caller"]
    base = f.split("/")[-1]
    if f.startswith("semver"):
        if p["form"] == "call" and p["prop"] and n != "QuotedChar":
            return "T"  # a free function of the crate, in scope by `use` or in the same file
        if n == "QuotedChar":
            return "X:a tuple struct's construction, not a call (no code runs)"
        if n == "from_str" and r in ("Version", "VersionReq", "Comparator", "Prerelease", "BuildMetadata"):
            return "T:" + r + ".from_str"
        if r == "eval":
            return "T:" + n
        if r in ("Identifier", "Self") and n == "empty":
            return "T:Identifier.empty"
        if r == "Identifier" and n == "new_unchecked":
            return "T:Identifier.new_unchecked"
        if r in ("NonNull", "NonZeroUsize"):
            return f"X:{r}::{n} of core, outside the corpus"
        if r == "Vec":
            return f"X:Vec::{n} of alloc, outside the corpus"
        if r == "Version" and n == "new":
            return "T:Version.new"
        if r == "Error" and n == "new":
            return "T:Error.new"  # impl Error in parse.rs
        if r == "self.identifier":
            return "T:Identifier." + n  # field identifier: Identifier
        if r in ("self", "rhs") and c.startswith("Identifier."):
            return "T:Identifier." + n  # &self / rhs: &Self in impl Identifier
        if r in ("self", "rhs") and c.startswith(("Prerelease.", "BuildMetadata.")) and n in ("is_empty", "as_str"):
            return "T:" + c.split(".")[0] + "." + n
        if n == "is_empty" and r in ("pre", "ver.pre", "cmp.pre", "self.pre"):
            return "T:Prerelease.is_empty"  # a Prerelease (field pre, or prerelease_identifier's result)
        if n == "is_empty" and r in ("build", "self.build"):
            return "T:BuildMetadata.is_empty"
        if n == "is_empty" and r in ("text", "rest"):
            return STD.format("str")
        if n == "is_empty" and r == "self.comparators":
            return STD.format("Vec<Comparator>")
        if n == "len" and r in ("self.pre", "self.build"):
            return "X:str::len through Deref<Target = str>, outside the corpus"
        if n in ("len", "next", "as_mut_ptr", "hash") or r == "Ord" and n == "cmp" and c.endswith(".cmp"):
            return STD.format({"next": "str::Split / Chars", "as_mut_ptr": "Vec", "hash": "str",
                               "cmp": "Ord::cmp on &str or usize"}.get(n, "str or usize"))
        if r == "Ord" and n == "cmp" and c.endswith(".partial_cmp"):
            return "T:" + c.split(".")[0] + ".cmp"  # Ord::cmp(self, rhs) on &Prerelease / &BuildMetadata
        if r == "Display" and n == "fmt":
            return "T:Error.fmt"  # Display::fmt(self, ..) on &Error: the Display impl (shares the name)
    else:
        if p["form"] == "qualified":
            if r == "take" and n == "new":
                return "T:new"  # take::new, the free function of take.rs
            if r in ("reader", "limit", "writer"):
                return f"X:{r}::new, a free function of {r}.rs, outside the corpus files"
            if r in ("Chain", "IntoIter") and n == "new":
                return f"T:{r}.new"
            if r == "UninitSlice":
                return "T:UninitSlice." + n
            if r == "Self":
                return "T:Buf." + n  # Self::get_u32(self): a default method, not overridden
            return f"X:{r}::{n} of std/core, outside the corpus"
        if n == "put" and r == "ret":
            return "X:BytesMut::put (ret is a BytesMut), outside the corpus files"
        if r in ("d", "dst") and base == "buf_mut.rs" and n in ("len", "as_mut_ptr"):
            return "T:UninitSlice." + n  # let d = self.chunk_mut(): &mut UninitSlice
        if c.startswith("UninitSlice.") and (r == "self" or r.startswith("self[")) and n in ("len", "as_mut_ptr"):
            return "T:UninitSlice." + n  # indexing an UninitSlice gives an UninitSlice (impl_index!)
        if n in ("len", "is_empty", "as_mut_ptr", "copy_from_slice", "get_ref") or r in ("self.0",):
            return STD.format({"get_ref": "std::io::Cursor"}.get(n, "slice, Vec or VecDeque"))
        if n == "take" and r == "(&mut self.b)":
            return "T:Buf.take"
        if c.split(".")[0] in BUF + BUFMUT and r == "self" and c.split(".")[0] != "Chain" or (
            c.startswith("Take.") and r == "self"
        ):
            return "T:" + c.split(".")[0] + "." + n  # self is the concrete impl type
        if r in ("self", "src", "self.a", "self.b", "b", "self.inner", "(&mut self.b)"):
            return trait_call(n)  # Self in a trait default, or a generic T: Buf / BufMut
    raise SystemExit(f"undecided {i}: {p['path']}:{p['line']} {r}.{n} in {c}")


dec = {i: verdict(i, p) for i, p in enumerate(props)}
files = open("/tmp/cb/rs2/files").read().split()
corpus = {
    "registry": "debian",
    "packages": [
        {"package": "librust-semver-dev", "version": "1.0.14-1", "archive": "librust-semver-dev_1.0.14-1_amd64.deb"},
        {"package": "librust-bytes-dev", "version": "1.2.1-1", "archive": "librust-bytes-dev_1.2.1-1_amd64.deb"},
    ],
    "fetch": "apt-get download librust-semver-dev=1.0.14-1 librust-bytes-dev=1.2.1-1 && dpkg-deb -x each .deb .",
    "root": "usr/share/cargo/registry",
    "files": files,
}
out = build("rust", "/tmp/cb/rs2/rs.prop.json", "/tmp/cb/rs2/rs.json", "/tmp/cb/rs2/tree/usr/share/cargo/registry", corpus, dec)
json.dump(out, open(sys.argv[1], "w"), indent=1)
if len(sys.argv) > 2:
    for i, p in enumerate(props):
        print(i, f"{p['path'].split('/')[-1]}:{p['line']}", p["caller"], f"{p['recv']}.{p['name']}", "=>", dec[i])
from collections import Counter
print(Counter(e["kind"] for e in out["edges"]), len({(e["caller"], e["callee"]) for e in out["edges"] if e["kind"] == "true"}))

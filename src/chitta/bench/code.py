"""The frozen call-graph benchmark (benchmarks/code/): its truth, its corpora, its score.

Each language's ``truth.json`` pins a small real corpus (a package at a version from PyPI,
npm or Debian, each file's SHA-256) and lists call edges read at their call sites:
``true`` edges, tempting ``false`` ones (a same-named method on another type, a shadowed
import, a builtin's method) and ``unresolvable`` sites, whose target the code does not fix
statically (interface or virtual dispatch), with their candidates. The truth is complete
for the corpus: every call in its files whose target is defined in the corpus is listed.
benchmarks/code/README.md gives the naming convention the edges use.

The score is pure: :func:`score` takes predicted ``(caller, callee)`` pairs, named as the
truth names them (:func:`align` renames an indexer's symbols by where they are defined),
and counts as in any edge-level call-graph evaluation: precision and recall over the true
pairs, plus the false pairs taken and the guesses at unresolvable sites.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chitta.errors import CorpusDrift, CorpusUnavailable

#: The languages with a truth file, in report order.
LANGUAGES = ("python", "typescript", "go", "rust", "java")
#: Where the truth files live, relative to the repository root.
DEFAULT_DIR = Path("benchmarks/code")
#: How far (lines) an indexer's symbol may start from the truth's definition line and still
#: be the same symbol: decorators, attributes and doc comments move the start.
ALIGN_SLACK = 3


@dataclass(frozen=True, slots=True)
class Edge:
    """One call site's verdict: ``caller`` calls ``callee`` at ``file:line`` (kind ``true``),
    does not (``false``, with ``why``), or may call any of ``candidates`` (``unresolvable``)."""

    caller: str
    callee: str | None
    file: str
    line: int
    kind: str
    why: str = ""
    candidates: tuple[str, ...] = ()
    #: The name as the call writes it, when an import alias makes it differ from the callee's.
    written: str = ""


@dataclass(frozen=True, slots=True)
class Truth:
    """One language's truth file, read."""

    language: str
    corpus: Mapping[str, object]
    #: qualified name -> its definitions (file, line, kind); overloads share a name.
    symbols: Mapping[str, tuple[Mapping[str, object], ...]]
    edges: tuple[Edge, ...]

    def pairs(self, kind: str) -> frozenset[tuple[str, str]]:
        """The distinct (caller, callee) pairs of one kind (``true`` or ``false``)."""
        return frozenset((e.caller, e.callee) for e in self.edges if e.kind == kind and e.callee)

    @property
    def files(self) -> tuple[Mapping[str, object], ...]:
        return tuple(self.corpus["files"])  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Score:
    """How predicted edges compare with one language's truth."""

    language: str
    true_pairs: int
    found: int  # true pairs predicted
    predicted: int  # predicted pairs whose caller the truth covers
    false_taken: int  # predicted pairs the truth marks false
    guessed: int  # predicted pairs into an unresolvable site's candidates (not true elsewhere)
    unresolvable_sites: int
    precision: float  # found / predicted: any covered pair not true counts against it
    recall: float  # found / true_pairs
    callees_precision: float  # symbol_callees: macro over the callers with a true edge
    callees_recall: float
    callers_precision: float  # symbol_callers: macro over the callees with a true edge
    callers_recall: float
    unresolved: int | None = None  # what the resolver itself left unresolved, when told

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def load(language: str, root: Path = DEFAULT_DIR) -> Truth:
    """Read ``root/<language>/truth.json``."""
    raw = json.loads((root / language / "truth.json").read_text(encoding="utf-8"))
    edges = tuple(
        Edge(
            caller=e["caller"],
            callee=e.get("callee"),
            file=e["file"],
            line=int(e["line"]),
            kind=e["kind"],
            why=e.get("why", ""),
            candidates=tuple(e.get("candidates", ())),
            written=e.get("written", ""),
        )
        for e in raw["edges"]
    )
    symbols = {q: tuple(defs) for q, defs in raw["symbols"].items()}
    return Truth(raw["language"], raw["corpus"], symbols, edges)


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def _macro(
    truth_by: Mapping[str, set[str]], pred_by: Mapping[str, set[str]]
) -> tuple[float, float]:
    """Mean precision and recall of one query per key of ``truth_by`` (a caller for
    symbol_callees, a callee for symbol_callers); a query with nothing predicted has
    precision 0."""
    if not truth_by:
        return 0.0, 0.0
    precisions, recalls = [], []
    for key, want in truth_by.items():
        got = pred_by.get(key, set())
        hit = len(want & got)
        precisions.append(_ratio(hit, len(got)))
        recalls.append(_ratio(hit, len(want)))
    return sum(precisions) / len(precisions), sum(recalls) / len(recalls)


def score(
    truth: Truth, predicted: Iterable[tuple[str, str]], *, unresolved: int | None = None
) -> Score:
    """Score predicted (caller, callee) pairs against ``truth``.

    Only pairs whose caller is a symbol of the corpus (one the truth names) are judged;
    among them, anything not a true pair lowers precision. A pair into the candidates of an
    unresolvable site is also counted as ``guessed``: the issue's rule is to keep such a call
    open, never to guess it into an edge.
    """
    true = truth.pairs("true")
    false = truth.pairs("false")
    guesses = {(e.caller, c) for e in truth.edges if e.kind == "unresolvable" for c in e.candidates}
    covered = set(truth.symbols) | {e.caller for e in truth.edges}
    judged = {(a, b) for a, b in predicted if a in covered}
    found = judged & true
    true_by_caller: dict[str, set[str]] = defaultdict(set)
    true_by_callee: dict[str, set[str]] = defaultdict(set)
    for a, b in true:
        true_by_caller[a].add(b)
        true_by_callee[b].add(a)
    pred_by_caller: dict[str, set[str]] = defaultdict(set)
    pred_by_callee: dict[str, set[str]] = defaultdict(set)
    for a, b in judged:
        pred_by_caller[a].add(b)
        pred_by_callee[b].add(a)
    cp, cr = _macro(true_by_caller, pred_by_caller)
    kp, kr = _macro(true_by_callee, pred_by_callee)
    return Score(
        language=truth.language,
        true_pairs=len(true),
        found=len(found),
        predicted=len(judged),
        false_taken=len(judged & false),
        guessed=len((judged & guesses) - true),
        unresolvable_sites=sum(1 for e in truth.edges if e.kind == "unresolvable"),
        precision=_ratio(len(found), len(judged)),
        recall=_ratio(len(found), len(true)),
        callees_precision=cp,
        callees_recall=cr,
        callers_precision=kp,
        callers_recall=kr,
        unresolved=unresolved,
    )


def align(truth: Truth, symbols: Iterable[tuple[str, str, int]]) -> dict[str, str]:
    """Map an indexer's qualified names to the truth's, by where each symbol is defined.

    ``symbols`` holds (qualified, path, start_line) with ``path`` relative to the corpus
    root. A symbol is the truth's symbol when the file and the last name part agree and the
    start lines are at most :data:`ALIGN_SLACK` apart; a name the truth already uses maps to
    itself. Names that match nothing are left out (they score as the indexer wrote them).
    """
    by_place: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for q, defs in truth.symbols.items():
        for d in defs:
            by_place[(str(d["file"]), q.rsplit(".", 1)[-1])].append((int(d["line"]), q))  # type: ignore[call-overload]
    out: dict[str, str] = {}
    for q, path, line in symbols:
        if q in truth.symbols:
            out[q] = q
            continue
        near = [
            (abs(at - line), tq)
            for at, tq in by_place.get((path, q.rsplit(".", 1)[-1]), ())
            if abs(at - line) <= ALIGN_SLACK
        ]
        if near:
            out[q] = min(near)[1]
    return out


def rename(pairs: Iterable[tuple[str, str]], names: Mapping[str, str]) -> set[tuple[str, str]]:
    """``pairs`` with each name replaced through ``names`` where it has an entry."""
    return {(names.get(a, a), names.get(b, b)) for a, b in pairs}


# --- the corpora -----------------------------------------------------------------------------


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, timeout=600)
    except FileNotFoundError as exc:
        raise CorpusUnavailable(f"{what}: {cmd[0]} is not installed") from exc
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        tail = detail.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise CorpusUnavailable(f"{what}: `{' '.join(cmd)}` failed: {tail[0]}") from exc


def _packages(corpus: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The registry packages a corpus is made of: its own ``package`` or its ``packages``
    list (a Rust corpus joins two crates), each with ``package``, ``version`` and ``archive``."""
    return list(corpus.get("packages") or [corpus])  # type: ignore[call-overload]


def _builds(package: Mapping[str, object]) -> list[Mapping[str, object]]:
    """The pinned build of a package, then its ``also`` builds: other versions checked by
    hand to hold the same corpus files (the SHA-256s still decide). A Debian mirror drops a
    superseded build (the JDK's security updates) while an older point release's stays."""
    also = package.get("also") or []
    return [package, *({**package, **dict(b)} for b in also)]  # type: ignore[union-attr]


def _download(registry: object, package: Mapping[str, object], dest: Path) -> Path:
    """One package's archive in ``dest``, fetched through its registry's own client: the
    first of its builds (``_builds``) the registry still offers."""
    failures: list[str] = []
    for build in _builds(package):
        try:
            return _download_build(registry, build, dest)
        except CorpusUnavailable as exc:
            failures.append(str(exc))
    raise CorpusUnavailable("; ".join(failures))


def _download_build(registry: object, package: Mapping[str, object], dest: Path) -> Path:
    archive = dest / str(package["archive"])
    if archive.exists():
        return archive
    name, version = str(package["package"]), str(package["version"])
    what = f"{registry} package {name} {version}"
    if registry == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        _run([*cmd, f"{name}=={version}", "-d", str(dest)], dest, what)
    elif registry == "npm":
        _run(["npm", "pack", f"{name}@{version}", "--pack-destination", str(dest)], dest, what)
    elif registry == "debian":
        # apt-get fails when the mirror no longer offers this exact version: CorpusUnavailable
        _run(["apt-get", "download", f"{name}={version}"], dest, what)
    else:
        raise CorpusUnavailable(f"{what}: unknown registry {registry!r}")
    if not archive.exists():
        raise CorpusUnavailable(f"{what}: the download did not leave {archive.name}")
    return archive


def _extract(corpus: Mapping[str, object], archive: Path, out: Path) -> None:
    """Unpack the archive (all of it for a .deb) into ``out``; of an inner zip, only the
    corpus files (the JDK's src.zip holds thousands)."""
    out.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith(".deb"):
        _run(["dpkg-deb", "-x", str(archive), str(out)], out, f"unpacking {archive.name}")
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(out, filter="data")
    inner = corpus.get("inner_zip")
    if inner and (out / str(inner)).is_file():  # the JDK's sources ship as src.zip in the .deb
        wanted = {str(f["path"]) for f in corpus["files"]}  # type: ignore[attr-defined]
        with zipfile.ZipFile(out / str(inner)) as zf:
            members = [m for m in zf.namelist() if m in wanted]
            zf.extractall(out / str(corpus["root"]), members)


def fetch(truth: Truth, cache: Path) -> Path:
    """The corpus root of ``truth``'s corpus under ``cache``, fetched once and verified.

    Raises CorpusUnavailable when the registry cannot give it and CorpusDrift when a file's
    SHA-256 differs from the pinned one.
    """
    corpus = truth.corpus
    dest = cache / truth.language
    dest.mkdir(parents=True, exist_ok=True)
    root = dest / "tree" / str(corpus["root"])
    if not all((root / str(f["path"])).is_file() for f in truth.files):
        for package in _packages(corpus):
            _extract(corpus, _download(corpus["registry"], package, dest), dest / "tree")
    verify(truth, root)
    return root


def verify(truth: Truth, root: Path) -> None:
    """Raise CorpusDrift unless every corpus file under ``root`` has its pinned SHA-256."""
    for f in truth.files:
        path = root / str(f["path"])
        if not path.is_file():
            raise CorpusDrift(f"{truth.language}: {f['path']} is missing from the corpus")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != f["sha256"]:
            raise CorpusDrift(f"{truth.language}: {f['path']} is not the pinned file")


def markdown(scores: Iterable[Score]) -> str:
    """The per-language table `chitta bench code` prints and appends to the docs."""
    rows = [
        "| language | true pairs | precision | recall | callees P/R | callers P/R "
        "| false taken | guessed | unresolvable sites | unresolved |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in scores:
        rows.append(
            f"| {s.language} | {s.true_pairs} | {s.precision:.3f} | {s.recall:.3f} "
            f"| {s.callees_precision:.3f}/{s.callees_recall:.3f} "
            f"| {s.callers_precision:.3f}/{s.callers_recall:.3f} | {s.false_taken} "
            f"| {s.guessed} | {s.unresolvable_sites} "
            f"| {'' if s.unresolved is None else s.unresolved} |"
        )
    return "\n".join(rows) + "\n"

"""A repository outline for an agent's first prompt: the most central symbols by the call
graph, grouped by file, within a character budget.

Centrality is PageRank (Page, Brin, Motwani & Winograd, "The PageRank Citation Ranking:
Bringing Order to the Web", Stanford 1999) over the resolved calls, caller → callee, one edge
per callsite (a function called from many places, or from central ones, ranks high); damping
0.85, power iteration until the ranks move less than 1e-9 (L1), a symbol that calls nothing
spreading its rank over all. Ties (symbols no call reaches) go by how often they are
called, then by file and line. Private names (a leading ``_``) come after every public one:
an agent starting on a repository wants its interface first.

Each line is one file, its symbols in rank order: ``path: Name(params) -> ret; Other(...)``.
Files are ordered by their best symbol; a symbol that does not fit the budget is left out
(a shorter one after it may still fit).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chitta.store.code import StoredSymbol

DAMPING = 0.85
TOLERANCE = 1e-9
MAX_ITERATIONS = 100
#: The most characters of one symbol's entry (a long signature is cut with "…").
ENTRY_CHARS = 100
#: The most central symbols an outline tries to fit (the rest rank too low to matter), and
#: the fewest characters left worth trying one more.
MAX_CONSIDERED = 2000
MIN_ENTRY = 6
#: Kinds an outline lists: a module or namespace is its file's line already.
LISTED_KINDS = frozenset({"function", "method", "class", "struct", "enum", "interface",
                          "trait"})  # fmt: skip
_SPACE = re.compile(r"\s+")
_SELF = re.compile(r"\((?:&?\s*(?:mut\s+)?self|cls)\s*(?:,\s*|(?=\)))")


def pagerank(n: int, edges: Sequence[tuple[int, int]]) -> np.ndarray:
    """PageRank of ``n`` nodes over directed ``edges`` (repeats weigh more); sums to 1."""
    if n == 0:
        return np.zeros(0)
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    out = np.bincount(src, minlength=n).astype(np.float64) if len(edges) else np.zeros(n)
    rank = np.full(n, 1.0 / n)
    weight = 1.0 / out[src] if len(edges) else np.zeros(0)
    for _ in range(MAX_ITERATIONS):
        dangling = rank[out == 0].sum()
        new = np.full(n, (1.0 - DAMPING + DAMPING * dangling) / n)
        if len(edges):
            new += DAMPING * np.bincount(dst, weights=rank[src] * weight, minlength=n)
        moved = float(np.abs(new - rank).sum())
        rank = new
        if moved < TOLERANCE:
            break
    return rank


@dataclass(frozen=True, slots=True)
class Ranked:
    """A symbol with its centrality and how many resolved calls reach it."""

    symbol: StoredSymbol
    rank: float
    calls_in: int


def central(symbols: Sequence[StoredSymbol], pairs: Sequence[tuple[str, str]]) -> list[Ranked]:
    """``symbols`` of the listed kinds, most central first (see the module docstring)."""
    row = {s.id: i for i, s in enumerate(symbols)}
    edges = [(row[a], row[b]) for a, b in pairs if a in row and b in row and a != b]
    ranks = pagerank(len(symbols), edges)
    calls_in = Counter(b for _, b in edges)
    out = [Ranked(s, float(ranks[i]), calls_in[i]) for i, s in enumerate(symbols)
           if s.symbol.kind in LISTED_KINDS]  # fmt: skip
    out.sort(key=lambda r: (r.symbol.symbol.name.startswith("_"), -r.rank, -r.calls_in,
                            r.symbol.repo, r.symbol.symbol.path,
                            r.symbol.symbol.start_line))  # fmt: skip
    return out


def entry(s: StoredSymbol) -> str:
    """One symbol as the outline writes it: ``Parent.name(params) -> ret``, whitespace
    collapsed, ``self``/``cls`` left out, at most :data:`ENTRY_CHARS`."""
    x = s.symbol
    signature = _SPACE.sub(" ", x.signature).strip()
    at = signature.find(x.name + "(")
    tail = signature[at + len(x.name) :] if at >= 0 else ""
    tail = _SELF.sub("(", tail).rstrip(" :{")
    parents = x.qualified.split(".")[:-1]
    owner = parents[-1] + "." if x.parent and x.kind == "method" and parents else ""
    text = f"{owner}{x.name}{tail}"
    return text if len(text) <= ENTRY_CHARS else text[: ENTRY_CHARS - 1] + "…"


def file_label(s: StoredSymbol, several_repos: bool) -> str:
    """The file as a line starts with: its path, after the repository's folder name when the
    realm holds several."""
    if not several_repos:
        return s.symbol.path
    return f"{s.repo.rstrip('/').rpartition('/')[2]}/{s.symbol.path}"


def outline(ranked: Sequence[Ranked], chars: int) -> tuple[str, int]:
    """The outline of ``ranked`` symbols (most central first) in at most ``chars``
    characters, and how many symbols it lists."""
    several = len({r.symbol.repo for r in ranked}) > 1
    lines: dict[str, list[str]] = {}
    used = shown = 0
    for r in ranked[:MAX_CONSIDERED]:
        if chars - used < MIN_ENTRY:
            break
        label, text = file_label(r.symbol, several), entry(r.symbol)
        held = lines.get(label)
        # A new line costs its label, ": " and a newline; a further entry "; " and itself.
        cost = len(text) + (2 if held else len(label) + 2 + (1 if lines else 0))
        if used + cost > chars:
            continue
        used += cost
        shown += 1
        lines.setdefault(label, []).append(text)
    return "\n".join(f"{label}: {'; '.join(entries)}" for label, entries in lines.items()), shown

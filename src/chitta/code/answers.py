"""The resolver's answers in the form the store records them: one per callsite, with the
target symbols themselves (the store finds their ids by file, name, kind and line).

:class:`Resolver` is the same seam keeping the resolution it made, for what else is made of
the edges (their triplets: code/edges.py)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from chitta.code.model import FileExtract, Symbol
from chitta.code.resolve import Resolution, resolve_index
from chitta.code.resolve import names as nm
from chitta.code.resolve.index import Index, symbol_key
from chitta.store.code import Resolution as Answer


def answers(index: Index, resolution: Resolution) -> list[Answer]:
    """Each callsite of ``resolution`` (made over ``index``): ``resolved`` to the one symbol
    its ``calls`` edge names, or open (``unresolved``, ``ambiguous``) with the symbols its
    candidates name (in any language, in the index's order)."""
    families = sorted({nm.family(ex.language) for ex in index.files.values()})
    out = []
    for edge in resolution.calls:
        targets = index.at.get((edge.object_path, edge.object), ())
        if edge.callsite is not None and targets:
            # Overloads share a qualified name in one file: the first written stands for them.
            first = min(targets, key=lambda s: s.start_line)
            out.append(Answer(edge.callsite, "resolved", (first,)))
    for call in resolution.open:
        candidates = tuple(s for name in call.candidates for s in _named(index, families, name))
        out.append(Answer(call.callsite, call.state, candidates))
    return out


def _named(index: Index, families: Sequence[str], qualified: str) -> list[Symbol]:
    """The symbols of every family with this qualified name."""
    found = [s for fam in families for s in index.qualified.get((fam, qualified), ())]
    return sorted(found, key=symbol_key) if len(families) > 1 else found


def resolve_answers(
    extracts: Sequence[FileExtract], paths: Collection[str] | None = None
) -> list[Answer]:
    """The indexer's ``resolve`` seam: resolve a repository's extracts, answer per callsite
    (with ``paths``, the callsites written in those files only, resolved against all)."""
    index = Index(list(extracts))
    return answers(index, resolve_index(index, paths))


class Resolver:
    """The indexer's ``resolve`` seam (as :func:`resolve_answers`) that keeps the last
    :class:`Resolution` it made in ``last`` and its index in ``index`` (None until it
    runs)."""

    def __init__(self) -> None:
        self.last: Resolution | None = None
        self.index: Index | None = None

    def __call__(
        self, extracts: Sequence[FileExtract], paths: Collection[str] | None = None
    ) -> list[Answer]:
        self.index = Index(list(extracts))
        self.last = resolve_index(self.index, paths)
        return answers(self.index, self.last)

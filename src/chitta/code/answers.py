"""The resolver's answers in the form the store records them: one per callsite, with the
target symbols themselves (the store finds their ids by file, name, kind and line).

:class:`Resolver` is the same seam keeping the resolution it made, for what else is made of
the edges (their triplets: code/edges.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from chitta.code.model import FileExtract, Symbol
from chitta.code.resolve import Resolution, resolve
from chitta.store.code import Resolution as Answer


def answers(extracts: Sequence[FileExtract], resolution: Resolution) -> list[Answer]:
    """Each callsite of ``resolution``: ``resolved`` to the one symbol its ``calls`` edge
    names, or open (``unresolved``, ``ambiguous``) with the symbols its candidates name."""
    by_place: dict[tuple[str, str], list[Symbol]] = defaultdict(list)
    by_name: dict[str, list[Symbol]] = defaultdict(list)
    for extract in extracts:
        for symbol in extract.symbols:
            by_place[(symbol.path, symbol.qualified)].append(symbol)
            by_name[symbol.qualified].append(symbol)
    out = []
    for edge in resolution.calls:
        targets = by_place.get((edge.object_path, edge.object), ())
        if edge.callsite is not None and targets:
            # Overloads share a qualified name in one file: the first written stands for them.
            first = min(targets, key=lambda s: s.start_line)
            out.append(Answer(edge.callsite, "resolved", (first,)))
    for call in resolution.open:
        candidates = tuple(s for name in call.candidates for s in by_name.get(name, ()))
        out.append(Answer(call.callsite, call.state, candidates))
    return out


def resolve_answers(
    extracts: Sequence[FileExtract], paths: Collection[str] | None = None
) -> list[Answer]:
    """The indexer's ``resolve`` seam: resolve a repository's extracts, answer per callsite
    (with ``paths``, the callsites written in those files only, resolved against all)."""
    extracts = list(extracts)
    return answers(extracts, resolve(extracts, paths))


class Resolver:
    """The indexer's ``resolve`` seam (as :func:`resolve_answers`) that keeps the last
    :class:`Resolution` it made in ``last`` (None until it runs)."""

    def __init__(self) -> None:
        self.last: Resolution | None = None

    def __call__(
        self, extracts: Sequence[FileExtract], paths: Collection[str] | None = None
    ) -> list[Answer]:
        extracts = list(extracts)
        self.last = resolve(extracts, paths)
        return answers(extracts, self.last)

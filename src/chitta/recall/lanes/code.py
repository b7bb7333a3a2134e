"""``code``: for a query that names code, the memories that name the symbols it names (seed
001, Code Intelligence: "for code-like queries (detected by heuristic: ``::``, ``->``,
``_``, ``.``, or single identifiers)", ``code_symbol_weight`` 0.5).

A query is code-like when a word of it is written as code is (:func:`code_names`): joined by
``::``, ``->`` or a ``.`` inside the word (``Cart.total``, ``a::b``, ``p->next``), with an
``_`` (``parse_tags``, ``__init__``), in CamelCase (``parseTags``, ``HTTPServer``), or when the
whole query is one identifier. Those words are looked up among the realm's indexed symbols
(``CodeTables.find_symbols``: exact and qualified names, any case; by prefix only when no
word names a symbol exactly). A symbol is not a memory: what the lane returns are the
memories that name a symbol found, by the entity links (store/entities.py: the identifier
as written, any case) of its name and qualified name, and, for a name that is one plain word
in CamelCase (``ParseTags``) or the query's own word (the query ``tokenize``), by the keyword
index on that word (a method ``run`` found by ``Job.run`` does not bring every memory with
"run" in it). A memory's score is how
many of the query's names it names a symbol of.

The cost for any other query is the detector alone (a regular expression, no read); for a
code-like query in a realm with no symbols, one indexed lookup per name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chitta.recall.lanes.base import LaneContext, scoped
from chitta.store.code import StoredSymbol
from chitta.store.terms import STOP_WORDS
from chitta.store.triplets import entity_key

#: A word as code writes it: identifier parts joined by ``::``, ``->`` or ``.``.
_WORD = re.compile(r"[A-Za-z_][\w]*(?:(?:::|->|\.)[A-Za-z_]\w*)*")
_CAMEL = re.compile(r"[a-z\d][A-Z]|[A-Z]{2}[a-z]")
_ONE_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:(?:::|->|\.)[A-Za-z_]\w*)*")
#: The query's code names looked up, at most (the first ones).
MAX_NAMES = 8


def _code_word(word: str) -> bool:
    """Whether ``word`` is written as code is: joined, with an underscore, or CamelCase."""
    if "::" in word or "->" in word:
        return True
    if "." in word:
        # "e.g", "i.e", "U.S": every part one letter is an abbreviation, not a name.
        return any(len(part) > 1 for part in word.split("."))
    return ("_" in word and any(c.isalpha() for c in word)) or bool(_CAMEL.search(word))


def code_names(query: str) -> tuple[str, ...]:
    """The names a code-like query gives, in order, ``::`` and ``->`` read as ``.``; empty
    when the query is not code-like (module docstring)."""
    text = query.strip()
    bare = text.rstrip("?!.;:()").strip("`'\"")
    if _ONE_IDENTIFIER.fullmatch(bare) and bare.lower() not in STOP_WORDS:
        words = [bare]
    else:
        words = [w.rstrip(".") for w in _WORD.findall(text)]
        words = [w for w in words if _code_word(w)]
    names = (w.replace("::", ".").replace("->", ".") for w in words)
    return tuple(dict.fromkeys(names))[:MAX_NAMES]


def symbols_named(ctx: LaneContext, names: tuple[str, ...], limit: int) -> dict[str, list]:
    """Per name, the realm's symbols it names: exactly (or by qualified name); by prefix
    only when no name names one exactly."""
    code = ctx.store.code()
    realm = ctx.scope.realm
    found = {n: code.find_symbols(realm, n, limit=limit) for n in names}
    if not any(found.values()):
        found = {n: code.find_symbols(realm, n, prefix=True, limit=limit) for n in names
                 if len(n.rpartition(".")[2]) >= 3}  # fmt: skip
    return {n: s for n, s in found.items() if s}


@dataclass(frozen=True, slots=True)
class CodeLane:
    name: str = "code"
    derived: bool = False
    #: Symbols one name is looked up as, at most.
    symbols: int = 20

    def run(self, ctx: LaneContext) -> list[tuple[str, float]]:
        names = code_names(ctx.query)
        if not names:
            return []
        named = symbols_named(ctx, names, self.symbols)
        if not named:
            return []
        links = ctx.store.links()
        realm = ctx.scope.realm
        scores: dict[str, float] = {}
        for name, symbols in named.items():
            mention: set[str] = set()
            for key in _keys(name, symbols):
                mention |= links.named_by(realm, key)
            for word in _plain_words(name, symbols):
                hits = ctx.store.keyword_search((word.lower(),), ctx.scope, ctx.depth)
                mention.update(i for i, _ in hits)
            for memory_id in mention:
                scores[memory_id] = scores.get(memory_id, 0.0) + 1.0
        return scoped(ctx, scores)


def _keys(name: str, symbols: list[StoredSymbol]) -> set[str]:
    """The entity keys a memory naming one of ``symbols`` holds: the name as the query wrote
    it, each symbol's own name and its qualified name."""
    keys = {entity_key(name)}
    for s in symbols:
        keys.add(entity_key(s.symbol.name))
        keys.add(entity_key(s.symbol.qualified))
    return {k for k in keys if k}


def _plain_words(name: str, symbols: list[StoredSymbol]) -> set[str]:
    """The symbols' names the keyword index is asked for: one plain word, in CamelCase or
    the very word the query wrote."""
    wanted = name.lower()
    return {
        s.symbol.name
        for s in symbols
        if s.symbol.name.isalnum()
        and (_CAMEL.search(s.symbol.name) or s.symbol.name.lower() == wanted)
    }

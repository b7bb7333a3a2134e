"""The code names a memory's text gives: which of its words may name an indexed symbol.

Pure. A memory is linked to a symbol it names (code/links.py); the rule here keeps ordinary
words out, since ``run``, ``get`` or ``Cart`` in a sentence is English, not a reference:

- anything written in backticks is code: `` `total` ``, `` `Cart.total()` ``; a span that
  is one name (with a call's parentheses) gives that name, a longer span the code-like names
  in it (below);
- outside backticks, a name is code-like when it joins parts with ``.``, ``::``, ``->`` or
  ``#`` (``Cart.total``, ``chitta::recall``, ``Cart#total``: at least 4 characters, the last
  part 2 or more, and not every part a single letter, so ``e.g`` and ``i.e`` are not), holds
  an ``_`` between word characters (``parse_tags``, ``MAX_DEPTH``, ``__init__``), is
  camelCase or PascalCase with an inner capital (``parseTags``, ``HttpClient``,
  ``URLParser``), or is called (``total(``, at least 3 characters).

A plain capitalised or lower-case word (``Cart``, ``run``), an acronym (``HTTP``) and a
number are not. The names keep their separators as written; at most :data:`MAX_NAMES` per
text, in order of first appearance.
"""

from __future__ import annotations

import re

#: Names read from one text, at most (a memory is short; this bounds a pasted log).
MAX_NAMES = 32
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SEP = r"(?:\.|::|->|#)"
#: A chain of names: not inside a longer word or chain on either side.
_CHAIN = re.compile(rf"(?<![A-Za-z0-9_$])(?<![.:#>]){_IDENT}(?:{_SEP}{_IDENT})*(?![A-Za-z0-9_])")
_BACKTICKS = re.compile(r"`([^`\n]{1,200})`")
_SPLIT = re.compile(_SEP)
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_SNAKE = re.compile(r"[A-Za-z0-9]_|_[A-Za-z0-9]")
#: A span that is one name, perhaps called: ``total``, ``Cart.total()``, ``f(x, y)``.
_ONE_NAME = re.compile(rf"\s*({_IDENT}(?:{_SEP}{_IDENT})*)\s*(?:\([^()]*\))?\s*;?\s*")


def code_like(name: str, called: bool = False) -> bool:
    """Whether ``name`` (a chain of identifiers) is written as code outside backticks."""
    parts = _SPLIT.split(name)
    if len(parts) > 1:
        return len(name) >= 4 and len(parts[-1]) >= 2 and any(len(p) > 1 for p in parts)
    return bool(_SNAKE.search(name) or _CAMEL.search(name)) or (called and len(name) >= 3)


def code_names(text: str) -> list[str]:
    """The code names in ``text`` (see the module docstring), each once."""
    found: dict[str, None] = {}
    spans: list[tuple[int, int]] = []
    for m in _BACKTICKS.finditer(text):
        spans.append(m.span())
        inner = m.group(1)
        one = _ONE_NAME.fullmatch(inner)
        if one is not None:
            found.setdefault(one.group(1))
        else:
            _add_chains(inner, found)
    outside, last = [], 0
    for start, end in spans:  # the rest of the text, the spans blanked so chains stop there
        outside.append(text[last:start])
        outside.append(" ")
        last = end
    outside.append(text[last:])
    _add_chains("".join(outside), found)
    return list(found)[:MAX_NAMES]


def _add_chains(text: str, found: dict[str, None]) -> None:
    for m in _CHAIN.finditer(text):
        name = m.group(0)
        called = text.startswith("(", m.end())
        if code_like(name, called):
            found.setdefault(name)


def lookup_form(name: str) -> str:
    """``name`` as the code tables look a qualified name up: parts joined with ``.``."""
    return _SPLIT.sub(".", name)

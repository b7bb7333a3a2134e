"""Entities named in a memory's text, found without any model.

An entity here is a string that names one particular thing, so that two memories naming it
are probably about the same thing even when they share no other word: a proper name
("Sweden", "Grand Canyon"), an identifier (``parse_tags``, ``store/sqlite.py``, ``v1.2.3``,
``bug-218``, ``#354``), or a number with its unit ("5 km", "$20", "3pm", "40%"). The rules
are surface patterns, so they over-collect (a capitalised word that is not a name) and
under-collect (a name written in lower case); the graph lane keeps only the entities rare in
their realm (recall/lanes/graph.py), which removes most of the noise the first kind adds.
"""

from __future__ import annotations

import re

from chitta.store.terms import STOP_WORDS

#: At most this many entities are kept per memory (the first ones in the text).
MAX_ENTITIES = 32

# A run of capitalised words: "Grand Canyon", "LGBTQ", "O'Neil". Apostrophe endings ("Mel's")
# are cut so the possessive names the same entity as the bare name.
_CAPITALISED = re.compile(r"\b[A-Z][\w-]*(?:'[A-Za-z]{2,})?(?:\s+[A-Z][\w-]*)*")
# Where a sentence (or a "Speaker: text" turn) starts: a capital there proves nothing.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|[\n\"“(]\s*)(?=\w)")
# Identifiers: an issue number, words joined by _ . / :: or -, or letters mixed with digits.
_IDENTIFIER = re.compile(
    r"#\d+\b"
    r"|\b(?=[\w.:/-]*[A-Za-z])\w+(?:(?:::|[_./-])\w+)+\b"  # joined words, at least one letter
    r"|\b(?=\w*\d)(?=\w*[A-Za-z])\w{2,}\b"  # letters and digits together: "x86", "3pm"
)
# A number with a unit or a currency sign: "5 km", "20 minutes", "$20", "40%", "3pm". The
# units are listed: "218 in" or "2 of" are a number and a word, not a quantity.
_UNITS = (
    "ms|s|sec|secs|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?|am|pm|"
    "mm|cm|m|km|mi|miles?|ft|feet|foot|inch(?:es)?|kg|g|lbs?|pounds?|l|ml|"
    "b|kb|mb|gb|tb|kib|mib|gib|k|x|times|people|percent"
)
_QUANTITY = re.compile(
    rf"[$€£]\s?\d[\d,.]*\d|[$€£]\d|(?<![\w./-])\d[\d,.]*\s?(?:%|(?:{_UNITS})\b)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")


def normalise(name: str) -> str:
    """The comparable form of a name: lower case, single spaces, no trailing punctuation."""
    return _SPACES.sub(" ", name).strip(" .,;:!?'\"").lower()


def entities(text: str) -> tuple[str, ...]:
    """The normalised entities of ``text``, in order of first appearance, at most
    :data:`MAX_ENTITIES`."""
    found: dict[str, int] = {}
    starts = {m.end() for m in _SENTENCE_START.finditer(text)}
    for m in _CAPITALISED.finditer(text):
        name = m.group(0)
        if m.start() in starts and not _SPACES.search(name) and not name.isupper():
            continue  # one capitalised word opening a sentence: most likely not a name
        _keep(found, name, m.start())
    for pattern in (_IDENTIFIER, _QUANTITY):
        for m in pattern.finditer(text):
            _keep(found, m.group(0), m.start())
    ordered = sorted(found, key=found.__getitem__)
    return tuple(ordered[:MAX_ENTITIES])


def _keep(found: dict[str, int], raw: str, at: int) -> None:
    name = normalise(raw.split("'")[0] if "'" in raw else raw)
    if len(name) < 2 or name in STOP_WORDS or name.isdigit() and len(name) < 3:
        return
    found.setdefault(name, at)

"""Entity and predicate names as callers give them, checked and keyed (store/triplets.py)."""

from __future__ import annotations

import math
import re

from chitta.errors import BadArgument, BadName
from chitta.store.triplets import SEED_PREDICATES, entity_key, predicate_key

#: Longest entity name accepted, in characters: a name, not a sentence.
MAX_ENTITY_CHARS = 200
#: Longest predicate accepted, in characters.
MAX_PREDICATE_CHARS = 64
#: Predicates under which an edge from a thing to itself means something: a function that
#: calls itself. Any other self-loop (a module importing itself, X relates_to X) is refused.
SELF_LOOP_PREDICATES = frozenset({"calls"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_PREDICATE = re.compile(r"^\w[\w.:/+#]*$")


def check_entity(name: object, what: str) -> tuple[str, str]:
    """``name`` stripped, and its key; :class:`BadName` naming ``what`` when it is not a name."""
    text = _text(name, what, MAX_ENTITY_CHARS)
    key = entity_key(text)
    if not key:
        raise BadName(f"{what} {text!r} has no letters or digits to name anything by")
    return text, key


def check_predicate(name: object, what: str = "predicate") -> tuple[str, str]:
    """``name`` stripped, and its key (``Lives In`` -> ``lives_in``)."""
    text = _text(name, what, MAX_PREDICATE_CHARS)
    key = predicate_key(text)
    if not _PREDICATE.match(key):
        raise BadName(
            f"{what} {text!r} is not a predicate: use words joined by spaces, - or _ "
            f"(e.g. lives_in, Works At; seed 001's are {', '.join(SEED_PREDICATES)})"
        )
    return text, key


def _text(name: object, what: str, limit: int) -> str:
    if not isinstance(name, str):
        raise BadName(f"{what} must be text, got {type(name).__name__}")
    text = name.strip()
    if not text:
        raise BadName(f"{what} is empty")
    if len(text) > limit:
        raise BadName(f"{what} is {len(text)} characters; a name is at most {limit}")
    if _CONTROL.search(text):
        raise BadName(f"{what} {text[:40]!r} holds a control character (a line break, a tab…)")
    if _SURROGATE.search(text):  # it could not be stored: SQLite text is UTF-8
        raise BadName(f"{what} holds a lone surrogate code point: it is not Unicode text")
    return text


def check_weight(weight: object) -> float:
    """A weight in (0, 1] as a float, or :class:`BadArgument`."""
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise BadArgument(f"weight must be a number in (0, 1], got {type(weight).__name__}")
    if not math.isfinite(weight) or not 0 < weight <= 1:
        raise BadArgument(f"weight {weight!r} is outside (0, 1]")
    return float(weight)

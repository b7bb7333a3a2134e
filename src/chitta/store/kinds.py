"""The 26 memory kinds of seed 001 and how fast each decays.

Decay rates are per day. The seed gives six of them (belief, symbol, wisdom, correction,
preference, episode); the other twenty are chitta's choices, grouped by how long that kind
of knowledge usually stays true: durable knowledge 0.005, lessons and plans 0.01-0.02,
transient states and signals 0.05. ``docs/memory-model.md`` lists them all.
"""

from __future__ import annotations

from enum import StrEnum

from chitta.errors import UnknownKind


class Kind(StrEnum):
    """A memory's node type; the value is its wire and storage spelling."""

    WISDOM = "wisdom"
    BELIEF = "belief"
    INTENTION = "intention"
    EPISODE = "episode"
    FAILURE = "failure"
    ASPIRATION = "aspiration"
    DREAM = "dream"
    QUESTION = "question"
    CORRECTION = "correction"
    ENTITY = "entity"
    TERM = "term"
    EDGE = "edge"
    INSIGHT = "insight"
    SIGNAL = "signal"
    STATE = "state"
    SUMMARY = "summary"
    REVIEW = "review"
    PREFERENCE = "preference"
    MILESTONE = "milestone"
    APPROACH = "approach"
    OUTCOME = "outcome"
    GAP = "gap"
    SYMBOL = "symbol"
    PROJECT_ESSENCE = "project_essence"
    MODULE_STATE = "module_state"
    PATTERN_STATE = "pattern_state"


#: Seed 001's numbering (0 wisdom … 25 pattern_state), kept for interchange.
KIND_NUMBER: dict[Kind, int] = {kind: i for i, kind in enumerate(Kind)}

#: Decay per day. Seed 001 values are marked; the rest are chitta's.
DECAY_RATE: dict[Kind, float] = {
    Kind.BELIEF: 0.0,  # seed 001
    Kind.SYMBOL: 0.0,  # seed 001
    Kind.WISDOM: 0.005,  # seed 001
    Kind.CORRECTION: 0.005,  # seed 001
    Kind.PREFERENCE: 0.01,  # seed 001
    Kind.EPISODE: 0.03,  # seed 001
    Kind.PROJECT_ESSENCE: 0.0,
    Kind.ENTITY: 0.005,
    Kind.TERM: 0.005,
    Kind.MILESTONE: 0.005,
    Kind.INSIGHT: 0.01,
    Kind.FAILURE: 0.01,
    Kind.APPROACH: 0.01,
    Kind.OUTCOME: 0.01,
    Kind.EDGE: 0.01,
    Kind.ASPIRATION: 0.01,
    Kind.INTENTION: 0.02,
    Kind.QUESTION: 0.02,
    Kind.SUMMARY: 0.02,
    Kind.REVIEW: 0.02,
    Kind.GAP: 0.02,
    Kind.MODULE_STATE: 0.02,
    Kind.PATTERN_STATE: 0.02,
    Kind.DREAM: 0.05,
    Kind.SIGNAL: 0.05,
    Kind.STATE: 0.05,
}

#: The kind a memory gets when the caller names none: an insight is a curated observation
#: that persists for months (decay 0.01/day) without the boost of wisdom or a correction.
DEFAULT_KIND = Kind.INSIGHT


def parse_kind(value: str | Kind) -> Kind:
    """The :class:`Kind` spelled ``value`` (case and ``-``/``_`` insensitive)."""
    if isinstance(value, Kind):
        return value
    key = str(value).strip().lower().replace("-", "_")
    try:
        return Kind(key)
    except ValueError:
        names = ", ".join(k.value for k in Kind)
        raise UnknownKind(f"unknown kind {value!r}; the kinds are: {names}") from None

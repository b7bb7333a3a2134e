"""The 26 kinds of seed 001, their numbering and their decay rates."""

from __future__ import annotations

import pytest

from chitta.errors import UnknownKind
from chitta.store.kinds import DECAY_RATE, DEFAULT_KIND, KIND_NUMBER, Kind, parse_kind

SEED_ORDER = [
    "wisdom",
    "belief",
    "intention",
    "episode",
    "failure",
    "aspiration",
    "dream",
    "question",
    "correction",
    "entity",
    "term",
    "edge",
    "insight",
    "signal",
    "state",
    "summary",
    "review",
    "preference",
    "milestone",
    "approach",
    "outcome",
    "gap",
    "symbol",
    "project_essence",
    "module_state",
    "pattern_state",
]


def test_twenty_six_kinds_in_seed_order() -> None:
    assert len(Kind) == 26
    assert [k.value for k in Kind] == SEED_ORDER
    assert KIND_NUMBER[Kind.WISDOM] == 0
    assert KIND_NUMBER[Kind.PATTERN_STATE] == 25
    assert {KIND_NUMBER[Kind(name)]: name for name in SEED_ORDER} == dict(enumerate(SEED_ORDER))


def test_every_kind_has_a_sane_decay_rate() -> None:
    assert set(DECAY_RATE) == set(Kind)
    assert all(0.0 <= rate <= 0.1 for rate in DECAY_RATE.values())


@pytest.mark.parametrize(
    ("kind", "rate"),
    [
        (Kind.BELIEF, 0.0),
        (Kind.SYMBOL, 0.0),
        (Kind.WISDOM, 0.005),
        (Kind.CORRECTION, 0.005),
        (Kind.PREFERENCE, 0.01),
        (Kind.EPISODE, 0.03),
    ],
)
def test_seed_decay_rates(kind: Kind, rate: float) -> None:
    assert DECAY_RATE[kind] == rate


def test_default_kind_is_insight() -> None:
    assert DEFAULT_KIND is Kind.INSIGHT


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("wisdom", Kind.WISDOM),
        ("WISDOM", Kind.WISDOM),
        ("  Belief ", Kind.BELIEF),
        ("project-essence", Kind.PROJECT_ESSENCE),
        ("Project_Essence", Kind.PROJECT_ESSENCE),
        ("PATTERN-STATE", Kind.PATTERN_STATE),
        (Kind.GAP, Kind.GAP),
    ],
)
def test_parse_kind_is_tolerant(text: str | Kind, kind: Kind) -> None:
    assert parse_kind(text) is kind


@pytest.mark.parametrize("text", ["", "wisdoms", "project essence", "fact"])
def test_unknown_kind_lists_the_kinds(text: str) -> None:
    with pytest.raises(UnknownKind) as info:
        parse_kind(text)
    message = str(info.value)
    assert repr(text) in message
    assert all(name in message for name in SEED_ORDER)
    assert info.value.code == "unknown_kind"

"""The time cue's registered LoCoMo rule: which questions, which cue, which wrong cue."""

from datetime import UTC, date, datetime

import pytest

from chitta.bench.locomo import Conversation, Question
from chitta.bench.timecue import (
    Cue,
    cue_for,
    movement,
    ndcg_returned,
    wrong_cue,
)


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, 13, tzinfo=UTC).timestamp() * 1000)


SESSIONS = [date(2023, 5, 8), date(2023, 6, 2), date(2023, 10, 13), date(2024, 1, 5)]
CONV = Conversation("conv-x", (), tuple((i + 1, _ms(d)) for i, d in enumerate(SESSIONS)), ())


def _q(text: str) -> Question:
    return Question("conv-x", 0, text, 4, ("D1:1",))


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        (
            "What did Mel paint on October 13, 2023?",
            Cue(date(2023, 10, 13), date(2023, 10, 13), "sure"),
        ),
        (
            "What did Gina find on 1 February, 2023?",
            Cue(date(2023, 2, 1), date(2023, 2, 1), "sure"),
        ),
        (
            "What setback did Melanie face in October 2023?",
            Cue(date(2023, 10, 1), date(2023, 10, 31), "likely"),
        ),
        (
            "When did Melanie go camping in June?",
            Cue(date(2023, 6, 1), date(2023, 6, 30), "likely"),
        ),
        ("What happened in January?", Cue(date(2024, 1, 1), date(2024, 1, 31), "likely")),
        ("What happened in March?", Cue(date(2024, 3, 1), date(2024, 3, 31), "likely")),
        ("How many beach trips in 2023?", Cue(date(2023, 1, 1), date(2023, 12, 31), "vague")),
        (
            "What did she see on February 30, 2023?",
            Cue(date(2023, 2, 1), date(2023, 2, 28), "likely"),
        ),
    ],
)
def test_the_cue_comes_from_the_question_and_the_session_dates(text: str, cue: Cue) -> None:
    assert cue_for(_q(text), CONV) == cue


def test_a_question_that_names_no_time_has_no_cue() -> None:
    assert cue_for(_q("What did Caroline research?"), CONV) is None
    assert cue_for(_q("Did she like the Mayflower?"), CONV) is None  # a word, not the month


def test_the_wrong_cue_moves_half_a_year_and_stays_before_the_last_session() -> None:
    early = Cue(date(2023, 5, 1), date(2023, 5, 31), "likely")
    assert wrong_cue(early, CONV) == Cue(date(2023, 10, 31), date(2023, 11, 30), "likely")
    late = Cue(date(2023, 10, 1), date(2023, 10, 31), "likely")
    assert wrong_cue(late, CONV) == Cue(date(2023, 4, 1), date(2023, 5, 1), "likely")
    assert late.as_time_cue() == {
        "after": "2023-10-01",
        "before": "2023-10-31",
        "confidence": "likely",
    }


def test_movement_and_ndcg_over_the_returned_rows() -> None:
    assert movement(["a", "g", "b"], ["g", "a", "b"], ["g"]) == 1
    assert movement(["g", "a"], ["a", "g"], ["g"]) == -1
    assert movement(["a", "b"], ["a", "b", "g"], ["g"]) == 1  # brought in by a seat
    assert movement(["g"], ["a"], ["g"]) == -1
    assert movement(["a"], ["b"], ["g"]) == 0
    assert ndcg_returned(["g", "a"], ["g"]) == 1.0
    assert 0 < ndcg_returned(["a", "g"], ["g"]) < 1
    assert ndcg_returned([], ["g"]) == 0.0

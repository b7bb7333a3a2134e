"""Distinctive query words: common words leave the keyword terms and the embedded text."""

from chitta.recall.query import MIN_REALM_SIZE, plan_query

DF = {"caroline": 90, "support": 3, "group": 5, "melanie": 60}


def _df(word: str) -> int:
    return DF.get(word, 0)


def test_common_words_leave_both_lanes() -> None:
    plan = plan_query("When did Caroline's support group meet?", _df, 100, 0.1)
    assert plan.common == ("caroline",)
    assert plan.terms == ("support", "group", "meet")
    assert plan.embed_text == "When did support group meet?"


def test_a_query_of_only_common_words_is_left_whole() -> None:
    plan = plan_query("Caroline and Melanie", _df, 100, 0.1)
    assert plan.common == () and plan.embed_text == "Caroline and Melanie"
    assert plan.terms == ("caroline", "melanie")


def test_small_realms_and_switched_off() -> None:
    small = plan_query("When did Caroline go?", _df, MIN_REALM_SIZE - 1, 0.1)
    assert small.common == () and "caroline" in small.terms
    off = plan_query("When did Caroline go to the group?", _df, 100, None)
    assert off.common == () and off.embed_text == "When did Caroline go to the group?"


def test_the_threshold_is_a_fraction_of_the_realm() -> None:
    assert plan_query("Melanie support", _df, 1000, 0.1).common == ()  # 60 of 1000
    assert plan_query("Melanie support", _df, 500, 0.1).common == ("melanie",)  # 60 of 500

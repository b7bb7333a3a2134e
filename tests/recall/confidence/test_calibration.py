"""The calibrated maximum relevance: the Platt fit, bands, the display refit, the measures."""

import json
import math
import random

import numpy as np
import pytest

from chitta.errors import BadArgument
from chitta.recall.confidence import calibration as calib


def _synthetic(n: int = 400, seed: int = 7) -> tuple[list[float], list[bool]]:
    """Raw values whose chance of a top-3 hit truly is sigmoid(8x - 4)."""
    rnd = random.Random(seed)
    raw = [rnd.uniform(0.0, 1.0) for _ in range(n)]
    hits = [rnd.random() < calib.sigmoid(8 * x - 4) for x in raw]
    return raw, hits


def test_the_fit_recovers_a_known_logistic() -> None:
    raw, hits = _synthetic(4000)
    a, b = calib.fit_logistic(raw, hits)
    assert a == pytest.approx(8, rel=0.15) and b == pytest.approx(-4, rel=0.15)


def test_bands_split_on_the_calibrated_value_at_the_threshold() -> None:
    fit = calib.Calibration(a=10, b=-5, threshold=0.5)
    assert calib.confidence(0.51, fit).band == calib.KNOWN
    assert calib.confidence(0.49, fit).band == calib.UNKNOWN
    assert calib.confidence(0.5, fit).calibrated == pytest.approx(0.5)


def test_the_display_refit_changes_the_number_shown_but_never_the_band() -> None:
    base = calib.Calibration(a=10, b=-5, threshold=0.5)
    shy = calib.Calibration(a=10, b=-5, threshold=0.5, display_a=0.5, display_b=-1.0)
    for raw in (0.2, 0.45, 0.55, 0.9):
        plain, refit = calib.confidence(raw, base), calib.confidence(raw, shy)
        assert plain.band == refit.band and plain.calibrated == refit.calibrated
        assert plain.shown == pytest.approx(plain.calibrated)  # identity refit
        expected = calib.sigmoid(0.5 * calib.logit(plain.calibrated) - 1.0)
        assert refit.shown == pytest.approx(expected) and refit.shown != plain.shown


def test_fit_calibration_is_close_to_calibrated_on_its_own_kind_of_data() -> None:
    raw, hits = _synthetic(3000)
    fit = calib.fit_calibration(raw, hits, source="test")
    test_raw, test_hits = _synthetic(3000, seed=99)
    predicted = [calib.confidence(x, fit).calibrated for x in test_raw]
    assert calib.ece(predicted, test_hits) < 0.04
    assert fit.threshold == calib.DEFAULT.threshold  # nothing said which are unanswerable


def test_unanswerable_queries_set_the_threshold_at_equal_error() -> None:
    raw, hits = _synthetic(600)
    unanswerable = [x < 0.3 for x in raw]
    hits = [h and not u for h, u in zip(hits, unanswerable, strict=True)]
    fit = calib.fit_calibration(raw, hits, source="test", unanswerable=unanswerable)
    p = [calib.confidence(x, fit).calibrated for x in raw]
    miss = sum(q < fit.threshold for q, u in zip(p, unanswerable, strict=True) if not u)
    leak = sum(q >= fit.threshold for q, u in zip(p, unanswerable, strict=True) if u)
    assert abs(miss / (len(raw) - sum(unanswerable)) - leak / sum(unanswerable)) < 0.05
    explicit = calib.fit_calibration(
        raw, hits, source="t", unanswerable=unanswerable, threshold=0.4
    )
    assert explicit.threshold == 0.4  # a threshold given wins


@pytest.mark.parametrize(
    ("raw", "hits", "message"),
    [
        ([0.1] * 5, [True] * 5, "at least"),
        ([0.1 * i for i in range(20)], [True] * 20, "both outcomes"),
        ([0.1] * 12, [True] * 11, "as many"),
    ],
)
def test_a_fit_that_cannot_be_made_says_why(raw, hits, message) -> None:
    with pytest.raises(BadArgument, match=message):
        calib.fit_calibration(raw, hits, source="t")


def test_a_backwards_fit_is_refused() -> None:
    raw = [i / 40 for i in range(40)]
    with pytest.raises(BadArgument, match="backwards"):
        calib.fit_calibration(raw, [x < 0.5 for x in raw], source="t")


def test_ece_is_zero_when_predictions_match_rates_and_large_when_overconfident() -> None:
    assert calib.ece([0.25] * 4, [True, False, False, False]) == pytest.approx(0.0)
    assert calib.ece([0.95] * 10, [True] * 5 + [False] * 5) == pytest.approx(0.45)


def test_auroc_counts_ties_half() -> None:
    assert calib.auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert calib.auroc([0.1], [0.9]) == 0.0
    assert calib.auroc([0.5], [0.5]) == 0.5
    with pytest.raises(BadArgument):
        calib.auroc([], [0.1])


def test_loo_refit_predicts_each_value_without_it() -> None:
    raw, hits = _synthetic(200)
    fit = calib.fit_calibration(raw, hits, source="t")
    p = [calib.confidence(x, fit).calibrated for x in raw]
    refit = calib.loo_refit(p, hits)
    assert len(refit) == len(p) and all(0 < q < 1 for q in refit)
    # Left out, an item's prediction differs slightly from the full-data refit's.
    assert refit != [calib.confidence(x, fit).shown for x in raw]


def test_max_relevance_is_the_best_cosine_and_minus_one_for_nothing() -> None:
    q = np.array([1.0, 0.0], dtype=np.float32)
    vectors = [np.array([0.6, 0.8], dtype=np.float32), np.array([0.8, 0.6], dtype=np.float32)]
    assert calib.max_relevance(q, vectors) == pytest.approx(0.8)
    assert calib.max_relevance(q, []) == -1.0


def test_a_calibration_round_trips_and_a_bad_one_is_named() -> None:
    fit = calib.Calibration(a=9.0, b=-6.0, threshold=0.2, source="golden file g.jsonl", pairs=40)
    assert calib.Calibration.from_json(fit.to_json()) == fit
    with pytest.raises(BadArgument, match="not JSON"):
        calib.Calibration.from_json("{nope")
    with pytest.raises(BadArgument, match="unknown field 'colour'"):
        calib.Calibration.from_json(json.dumps({**json.loads(fit.to_json()), "colour": 1}))
    with pytest.raises(BadArgument, match="incomplete"):
        calib.Calibration.from_json(json.dumps({"a": 1.0}))
    with pytest.raises(BadArgument, match="threshold"):
        calib.Calibration(a=1, b=0, threshold=1.5)
    with pytest.raises(BadArgument, match="finite"):
        calib.Calibration(a=math.nan, b=0, threshold=0.5)
    with pytest.raises(BadArgument, match="positive"):
        calib.Calibration(a=-1, b=0, threshold=0.5)


def test_the_words_say_the_band_the_percentage_and_a_default_fit() -> None:
    known = calib.confidence(0.9, calib.DEFAULT)
    assert known.words().startswith(f"KNOWN ({known.percent}%)")
    assert "chitta calibrate" in known.words()  # the default fit says so
    own = calib.Calibration(a=9.8, b=-6.2, threshold=0.18, source="golden file g.jsonl")
    unknown = calib.confidence(0.1, own)
    assert unknown.words().startswith("UNKNOWN (") and "chitta calibrate" not in unknown.words()
    assert unknown.as_dict()["band"] == "UNKNOWN"


def test_a_ceiling_is_found_where_the_hits_plateau_and_not_where_they_do_not() -> None:
    rnd = random.Random(3)
    raw = [rnd.uniform(0.0, 1.0) for _ in range(4000)]
    plateau = [rnd.random() < 0.55 * calib.sigmoid(12 * x - 5) for x in raw]
    (a, _), c = calib.fit_capped([raw], plateau)
    assert c == pytest.approx(0.55, abs=0.05) and a == pytest.approx(12, rel=0.3)
    fit = calib.fit_calibration(raw, plateau, source="t")
    assert fit.ceiling == c and calib.confidence(1.0, fit).calibrated <= c
    assert calib.fit_calibration(raw, plateau, source="t", ceiling=False).ceiling == 1.0
    free, hits = _synthetic(4000)
    assert calib.fit_capped([free], hits)[1] >= 0.95


def test_the_ceiling_gives_way_in_a_store_the_top_3_holds_whole() -> None:
    assert calib.ceiling_at(0.6, 1, 3) == calib.ceiling_at(0.6, 3, 3) == 1.0
    assert calib.ceiling_at(0.6, 6, 3) == pytest.approx(0.8)
    assert calib.ceiling_at(0.6, 600, 3) == pytest.approx(0.602)
    assert calib.ceiling_at(0.6, 2, 0) == calib.ceiling_at(0.6, 600, 0) == 0.6
    # Big stores plateau at 0.55; stores of one to three memories hold their gold every time
    # it is there: the fit finds the plateau and lets the small stores past it.
    rnd = random.Random(11)
    raw, sizes, hits = [], [], []
    for _ in range(4000):
        size = rnd.choice([1, 2, 3, 600, 600, 600])
        x = rnd.uniform(0.0, 1.0)
        top = calib.ceiling_at(0.55, size, 3)
        raw.append(x)
        sizes.append(size)
        hits.append(rnd.random() < top * calib.sigmoid(12 * x - 5))
    # Which could be answered does not depend on the size: the spread comes out near 0.
    unanswerable = [x < 0.3 for x in raw]
    fit = calib.fit_calibration(raw, hits, sizes=sizes, unanswerable=unanswerable, source="t")
    assert fit.spread < 0.02 and fit.reach == 3 and fit.ceiling == pytest.approx(0.55, abs=0.05)
    assert calib.confidence(1.0, fit, 1).calibrated > 0.9
    assert calib.confidence(1.0, fit, 600).calibrated <= calib.ceiling_at(fit.ceiling, 600, 3) < 0.6
    # Without sizes there is nothing to give way to.
    assert calib.fit_calibration(raw, hits, source="t").reach == 0


def test_the_spread_is_fitted_from_stores_of_different_sizes() -> None:
    rnd = random.Random(5)
    raw, sizes, hits = [], [], []
    for _ in range(3000):
        size = rnd.choice([1, 3, 5, 500, 700])
        x = rnd.uniform(-0.1, 0.8)
        # True chance: a logistic in the cosine less 0.08·√(2 ln N).
        hits.append(rnd.random() < calib.sigmoid(10 * calib.adjusted(x, size, 0.08) - 2))
        raw.append(x)
        sizes.append(size)
    assert calib.fit_spread(raw, sizes, hits) == pytest.approx(0.08, abs=0.02)
    assert calib.fit_spread(raw, [600] * len(raw), hits) is None  # one size: cannot tell
    fit = calib.fit_calibration(raw, hits, sizes=sizes, source="t")
    assert fit.spread == pytest.approx(0.08, abs=0.02)
    # Without sizes the fit is of the raw cosine alone; with one size, the default's spread.
    assert calib.fit_calibration(raw, hits, source="t").spread == 0.0
    one = calib.fit_calibration(raw, hits, sizes=[600] * len(raw), source="t")
    assert one.spread == calib.DEFAULT.spread


def test_a_stored_fit_of_before_the_size_and_ceiling_still_reads() -> None:
    old = {"a": 9.87, "b": -6.27, "threshold": 0.18, "display_a": 1.0, "display_b": 0.0,
           "source": "golden", "pairs": 40, "fitted_at": None, "feature": "max-cosine-v1",
           "model": None}  # fmt: skip
    fit = calib.Calibration.from_json(json.dumps(old))
    assert fit.feature == "max-cosine-v1" != calib.FEATURE  # read, but not applied (api.py)
    assert fit.spread == 0.0 and fit.ceiling == 1.0 and fit.reach == 0
    for bad in ({"ceiling": 0.0}, {"ceiling": 1.5}, {"spread": -0.1}, {"reach": -1},
                {"reach": 2.5}, {"reach": True}):  # fmt: skip
        with pytest.raises(BadArgument):
            calib.Calibration.from_json(json.dumps({**old, **bad}))


def test_the_words_found_follow_the_rule_of_succession_over_the_first_three_hits() -> None:
    words = ("kafka", "retention", "topic", "days")
    # The best of the first three holds three of four: (3 + 1) / (4 + 2).
    assert calib.found_share(words, [{"kafka"}, {"kafka", "retention", "topic"}, set()]) == 4 / 6
    # Only the first three are read: the fit's outcome is the top 3.
    assert calib.found_share(words, [set(), set(), set(), set(words)]) == 1 / 6
    assert calib.found_share(words, []) == 1 / 6  # nothing ranked: none of it found
    assert calib.found_share((), [set()]) == 0.5  # no distinctive word: no evidence either way
    # One word of one is weaker evidence than three of three; all found beats most found.
    one, three = calib.found_share(("port",), [{"port"}]), calib.found_share(words[:3], [words])
    assert one == pytest.approx(2 / 3) and three == 0.8 > one


def _with_words(
    n: int, weight: float, seed: int = 3
) -> tuple[list[float], list[float], list[bool]]:
    """Cosines and shares found whose chance of a top-3 hit truly is sigmoid(8x + w·f − 7)."""
    rnd = random.Random(seed)
    raw = [rnd.uniform(0.0, 1.0) for _ in range(n)]
    found = [rnd.choice([0.2, 0.4, 0.6, 0.8]) for _ in range(n)]
    hits = [rnd.random() < calib.sigmoid(8 * x + weight * f - 7)
            for x, f in zip(raw, found, strict=True)]  # fmt: skip
    return raw, found, hits


def test_the_words_found_get_their_own_weight_and_sharpen_the_fit() -> None:
    raw, found, hits = _with_words(6000, 4.0)
    fit = calib.fit_calibration(raw, hits, source="t", found=found, ceiling=False)
    assert fit.found_weight == pytest.approx(4.0, rel=0.15) and fit.a == pytest.approx(8, rel=0.15)
    cosine_only = calib.fit_calibration(raw, hits, source="t", ceiling=False)
    assert cosine_only.found_weight == 0.0
    test_raw, test_found, test_hits = _with_words(4000, 4.0, seed=9)
    both = [calib.confidence(x, fit, 1, f).calibrated
            for x, f in zip(test_raw, test_found, strict=True)]  # fmt: skip
    alone = [calib.confidence(x, cosine_only, 1, f).calibrated
             for x, f in zip(test_raw, test_found, strict=True)]  # fmt: skip
    assert calib.ece(both, test_hits) < 0.03

    def log_loss(p: list[float]) -> float:
        return -float(
            np.mean([math.log(q if h else 1 - q) for q, h in zip(p, test_hits, strict=True)])
        )

    assert log_loss(both) < log_loss(alone) - 0.02  # it tells more questions apart
    # More of the question found never lowers the chance; a fit without the weight ignores it.
    more, less = calib.confidence(0.5, fit, 1, 1.0), calib.confidence(0.5, fit, 1, 0.0)
    assert more.calibrated > less.calibrated and (more.found, less.found) == (1.0, 0.0)
    assert calib.confidence(0.5, cosine_only, 1, 0.0).calibrated == pytest.approx(
        calib.confidence(0.5, cosine_only, 1, 1.0).calibrated)  # fmt: skip


def test_words_that_say_nothing_or_replace_the_cosine_leave_the_cosine_alone() -> None:
    raw, found, hits = _with_words(3000, 0.0)
    noise = calib.fit_calibration(raw, hits, source="t", found=found, ceiling=False)
    assert noise.found_weight < 0.3
    # A small set the words separate alone: the cosine must stay the witness.
    raw = [0.2, 0.3, 0.4, 0.5, 0.6] * 4
    found = [1.0, 0.0, 1.0, 0.0, 1.0] * 4
    hits = [f == 1.0 for f in found]
    fit = calib.fit_calibration(raw, hits, source="t", found=found)
    assert fit.found_weight == 0.0 and fit.a > 0
    with pytest.raises(BadArgument, match="words found"):
        calib.fit_calibration(raw, hits, source="t", found=found[:-1])


def test_a_fit_stored_before_the_words_reads_as_the_cosine_alone() -> None:
    stored = json.loads(calib.DEFAULT.to_json())
    stored.pop("found_weight")
    old = calib.Calibration.from_json(json.dumps(stored))
    assert old.found_weight == 0.0
    assert (
        calib.confidence(0.4, old, 100, 0.0).calibrated
        == calib.confidence(0.4, old, 100).calibrated
    )
    with pytest.raises(BadArgument, match="must not be negative"):
        calib.Calibration(a=1, b=0, threshold=0.5, found_weight=-1.0)


def test_the_words_the_first_hit_holds_are_counted_from_it_alone() -> None:
    words = ("kafka", "retention", "topic", "days")
    assert calib.words_held(words, [{"kafka", "topic"}, set(words)]) == 2
    assert calib.words_held(words, [set(), set(words)]) == 0
    assert calib.words_held(words, []) == 0  # nothing ranked
    assert calib.words_held((), [{"kafka"}]) == 0


def test_each_word_held_shrinks_the_ceilings_miss() -> None:
    big = calib.ceiling_at(0.2, 600, 3)
    one, three = calib.ceiling_at(0.2, 600, 3, 1, 0.35), calib.ceiling_at(0.2, 600, 3, 3, 0.35)
    assert big < one < three < 1.0
    assert 1 - one == pytest.approx((1 - big) * math.exp(-0.35))
    assert calib.ceiling_at(0.2, 600, 3, 5, 0.0) == big  # no decay: the words do not count
    assert calib.ceiling_at(0.2, 2, 3, 0, 0.35) == 1.0  # a store the top 3 holds whole


def _log_loss(p: list[float], hits: list[bool]) -> float:
    return -float(np.mean([math.log(q if h else 1 - q) for q, h in zip(p, hits, strict=True)]))


def _plateau_by_words(n: int, decay: float, seed: int) -> tuple[list, list, list, list]:
    """Cosines, big realms, words held and hits whose chance truly is
    ceiling_at(0.2, N, 3, held, decay) · sigmoid(12x − 5)."""
    rnd = random.Random(seed)
    raw = [rnd.uniform(0.0, 1.0) for _ in range(n)]
    sizes = [600] * n
    held = [rnd.randint(0, 6) for _ in range(n)]
    hits = [rnd.random() < calib.ceiling_at(0.2, 600, 3, h, decay) * calib.sigmoid(12 * x - 5)
            for x, h in zip(raw, held, strict=True)]  # fmt: skip
    return raw, sizes, held, hits


def test_the_word_decay_is_fitted_with_the_ceiling_and_lifts_the_chance_not_the_band() -> None:
    raw, sizes, held, hits = _plateau_by_words(6000, 0.35, seed=4)
    unanswerable = [x < 0.3 for x in raw]
    fit = calib.fit_calibration(raw, hits, sizes=sizes, held=held, unanswerable=unanswerable,
                                source="t")  # fmt: skip
    assert fit.word_decay == pytest.approx(0.35, abs=0.1)
    assert fit.ceiling == pytest.approx(0.2, abs=0.1)
    # Without the words held there is nothing to decay: one ceiling for every question.
    plain = calib.fit_calibration(raw, hits, sizes=sizes, unanswerable=unanswerable, source="t")
    assert plain.word_decay == 0.0 and plain.ceiling > fit.ceiling
    # Measured on new questions, the ceiling the words lift is the better calibrated.
    t_raw, t_sizes, t_held, t_hits = _plateau_by_words(4000, 0.35, seed=8)
    lifted = [calib.confidence(x, fit, n, held=h).calibrated
              for x, n, h in zip(t_raw, t_sizes, t_held, strict=True)]  # fmt: skip
    flat = [calib.confidence(x, plain, n, held=h).calibrated
            for x, n, h in zip(t_raw, t_sizes, t_held, strict=True)]  # fmt: skip
    assert calib.ece(lifted, t_hits) < 0.03
    assert _log_loss(lifted, t_hits) < _log_loss(flat, t_hits) - 0.02  # tells more apart
    # More words held raise the chance shown, never the band: it says whether the store
    # knows the topic, and is split on the value before the words held lift it.
    none, many = calib.confidence(0.6, fit, 600, held=0), calib.confidence(0.6, fit, 600, held=6)
    assert many.calibrated > none.calibrated and many.band == none.band
    assert many.signal == none.signal == pytest.approx(none.calibrated)
    with pytest.raises(BadArgument, match="words held"):
        calib.fit_calibration(raw, hits, sizes=sizes, held=held[:-1], source="t")


def test_a_fit_stored_before_the_word_decay_reads_with_one_ceiling() -> None:
    stored = json.loads(calib.DEFAULT.to_json())
    stored.pop("word_decay")
    old = calib.Calibration.from_json(json.dumps(stored))
    assert old.word_decay == 0.0
    assert calib.confidence(0.5, old, 100, held=6).calibrated == pytest.approx(
        calib.confidence(0.5, old, 100, held=0).calibrated)  # fmt: skip
    with pytest.raises(BadArgument, match="word decay must not be negative"):
        calib.Calibration(a=1, b=0, threshold=0.5, word_decay=-0.1)

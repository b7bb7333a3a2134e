"""The rerank stage (seed 000): its formula, the kind envelope, and every fallback.

A stand-in scorer plays the cross-encoder here so that these run without torch; the real
ONNX and Hugging Face models (tiny ones the tests build and export) are tested in
tests/embed/test_export_reranker.py under the export marker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.cli.render import print_hits
from chitta.config import RerankSettings, Settings
from chitta.daemon.methods import METHODS, check_params
from chitta.embed.cross_encoder import LazyCrossEncoder
from chitta.errors import BadArgument
from chitta.recall.config import MAX_LIMIT
from chitta.recall.rerank import (
    RERANKED_OUT,
    envelope,
    fetch_limit,
    rerank_order,
    rerank_scores,
    sigmoid,
)
from chitta.recall.scoring_config import DEFAULT as SCORING
from chitta.wire import result_to_dict

REALM = "demo"
QUERY = "what happened with the deploy"
TARGET = "migration"  # the stand-in scorer's relevant word
MEMORIES = [
    ("The deploy pipeline runs the unit tests before building the image", "insight", ()),
    ("Every merge to main triggers a deploy to the staging cluster", "insight", ()),
    ("The deploy on Friday failed because the build disk was full", "episode", ()),
    ("Rolling back a bad deploy takes about five minutes with the script", "wisdom", ()),
    ("A deploy of the billing service needs the feature flag switched on", "insight", ()),
    ("Production deploy windows are Tuesday and Thursday mornings", "preference", ()),
    ("The database migration must finish before the deploy starts", "correction", ()),
    ("Deploy log: migration step 4 of 9 took 31 seconds", "insight", ("operational",)),
]


# --- the formula -------------------------------------------------------------------------------


def test_sigmoid_is_stable_at_the_extremes() -> None:
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        values = sigmoid(np.array([-1000.0, -1.0, 0.0, 1.0, 1000.0]))
    assert values[0] == 0.0 and values[2] == 0.5 and values[4] == 1.0
    assert values[1] == pytest.approx(1 / (1 + math.e)) and values[1] + values[3] == 1.0


def test_the_kind_envelope_is_seed_000s() -> None:
    assert envelope(SCORING.prior("correction")) == pytest.approx(1.09)
    assert envelope(SCORING.prior("insight", ("operational",))) == pytest.approx(0.94)
    assert envelope(SCORING.prior("episode")) == pytest.approx(0.91)
    assert envelope(SCORING.prior("decision")) == pytest.approx(1.0)  # no prior


def test_score_is_sigmoid_of_logit_times_envelope() -> None:
    scores = rerank_scores([2.0, -1.0], [1.3, 0.8])
    assert scores[0] == pytest.approx(1 / (1 + math.exp(-2.0)) * 1.09)
    assert scores[1] == pytest.approx(1 / (1 + math.exp(1.0)) * 0.94)


def test_equal_relevance_puts_curated_corrections_above_fragments() -> None:
    priors = [0.8, 1.0, 1.3]  # operational, no prior, correction
    assert rerank_order(rerank_scores([0.4, 0.4, 0.4], priors)) == [2, 1, 0]


def test_relevance_still_outweighs_the_kind() -> None:
    # The envelope spans 0.85-1.15 for priors in 0.5-1.5: a clearly better logit wins.
    assert rerank_order(rerank_scores([0.0, 2.0], [1.3, 0.7])) == [1, 0]


def test_ties_keep_the_fused_order() -> None:
    assert rerank_order([0.5, 0.7, 0.5, 0.7, 0.5]) == [1, 3, 0, 2, 4]


@given(st.lists(st.floats(-50, 50), max_size=40), st.data())
def test_order_is_a_stable_descending_permutation(logits: list[float], data) -> None:
    priors = data.draw(st.lists(st.floats(0.5, 1.5), min_size=len(logits), max_size=len(logits)))
    scores = rerank_scores(logits, priors)
    order = rerank_order(scores)
    assert sorted(order) == list(range(len(logits)))
    for a, b in zip(order, order[1:], strict=False):
        assert scores[a] > scores[b] or (scores[a] == scores[b] and a < b)


@pytest.mark.parametrize(("limit", "fetch"), [(1, 4), (10, 40), (50, 200), (MAX_LIMIT, MAX_LIMIT)])
def test_fetch_is_four_times_the_limit_within_the_maximum(limit: int, fetch: int) -> None:
    assert fetch_limit(limit) == fetch


@pytest.mark.parametrize("limit", [0, -3, MAX_LIMIT + 1])
def test_a_bad_limit_is_passed_through_for_the_pipeline_to_refuse(limit: int) -> None:
    assert fetch_limit(limit) == limit


# --- the stage in recall -----------------------------------------------------------------------


@dataclass
class StandIn:
    """Plays the cross-encoder: a high logit for documents with ``TARGET``, else low, or the
    result of ``output`` (to return malformed scores or raise)."""

    name: str = "stand-in"
    output: Callable[[Sequence[str]], object] | None = None
    seen: list[int] = field(default_factory=list)

    def score(self, query: str, documents: Sequence[str]) -> object:
        self.seen.append(len(documents))
        if self.output is not None:
            return self.output(documents)
        return np.array([[3.0] if TARGET in d else [-3.0] for d in documents], np.float32)


def _remember_all(chitta: Chitta) -> None:
    for content, kind, tags in MEMORIES:
        chitta.remember(content, kind=kind, tags=list(tags), realm=REALM)


def _with_reranker(chitta: Chitta, scorer: StandIn | None = None) -> Chitta:
    _remember_all(chitta)
    settings = RerankSettings(onnx_dir=Path("/models/stand-in"))
    chitta.reranker = LazyCrossEncoder(settings, load=lambda s: scorer)
    return chitta


def _ids(result) -> list[str]:
    return [h.memory.id for h in result.hits]


def test_reranks_fetched_candidates_by_the_formula(chitta: Chitta) -> None:
    scorer = StandIn()
    _with_reranker(chitta, scorer)
    fused = chitta.recall(QUERY, realm=REALM, limit=len(MEMORIES), rerank=False)
    result = chitta.recall(QUERY, realm=REALM, limit=2)
    assert scorer.seen == [len(fused.hits)]  # 4 x 2 fetched: every memory of the realm
    # Both memories naming the target come first; between them the correction (prior 1.3)
    # beats the operational fragment (0.8) at the same logit.
    assert [h.memory.kind.value for h in result.hits] == ["correction", "insight"]
    assert all(TARGET in h.memory.content for h in result.hits)
    for hit in result.hits:
        prior = SCORING.prior(hit.memory.kind, hit.memory.tags)
        assert hit.factors["rerank"] == pytest.approx(sigmoid(np.array(3.0)) * envelope(prior))
    info = result.rerank
    assert (info.applied, info.model, info.fallback, info.candidates) == (
        True, "stand-in", None, len(fused.hits),
    )  # fmt: skip
    assert result.dropped.get(RERANKED_OUT) == len(fused.hits) - 2
    assert "rerank" in result.timing_ms


def test_the_json_shape_reports_the_stage(chitta: Chitta, capsys) -> None:
    _with_reranker(chitta, StandIn())
    data = result_to_dict(chitta.recall(QUERY, realm=REALM, limit=2))
    assert data["rerank"]["applied"] is True and data["rerank"]["model"] == "stand-in"
    assert set(data["rerank"]) == {"applied", "model", "fallback", "candidates", "ms"}
    assert data["hits"][0]["factors"]["rerank"] > data["hits"][1]["factors"]["rerank"]
    print_hits(data)
    assert "reranked by stand-in over 8 candidates" in capsys.readouterr().out


def test_without_a_reranker_nothing_changes(chitta: Chitta) -> None:
    _remember_all(chitta)
    result = chitta.recall(QUERY, realm=REALM, limit=3)
    assert chitta.reranker is None and result.rerank is None
    assert "rerank" not in result_to_dict(result)
    assert all("rerank" not in h.factors for h in result.hits)


def test_rerank_false_skips_the_stage(chitta: Chitta) -> None:
    scorer = StandIn()
    _with_reranker(chitta, scorer)
    result = chitta.recall(QUERY, realm=REALM, limit=3, rerank=False)
    assert scorer.seen == [] and result.rerank is None and len(result.hits) == 3


def _assert_fell_back(chitta: Chitta, result, reason: str) -> None:
    """The hits are the fused order cut at the limit, and the result says why."""
    fused = chitta.recall(QUERY, realm=REALM, limit=len(result.hits), rerank=False)
    assert _ids(result) == _ids(fused)
    assert all("rerank" not in h.factors for h in result.hits)
    assert result.rerank.applied is False
    assert result.rerank.fallback.startswith(reason), result.rerank.fallback
    assert result_to_dict(result)["rerank"]["fallback"] == result.rerank.fallback


def test_a_load_failure_falls_back_once_and_says_so(chitta: Chitta, caplog) -> None:
    calls = []

    def broken(settings: RerankSettings) -> StandIn:
        calls.append(1)
        raise OSError("model.onnx: permission denied")

    _with_reranker(chitta)
    chitta.reranker = LazyCrossEncoder(RerankSettings(onnx_dir=Path("/m/ce")), load=broken)
    for _ in range(2):
        result = chitta.recall(QUERY, realm=REALM, limit=2)
        _assert_fell_back(chitta, result, "load failed: OSError: model.onnx: permission denied")
        assert result.rerank.model == "ce" and result.rerank.candidates == 0
        assert result.dropped.get("cut", 0) >= len(MEMORIES) - 2
    assert calls == [1]
    warnings = [r for r in caplog.records if r.name.startswith("chitta")]
    assert len(warnings) == 1 and "permission denied" in warnings[0].getMessage()


def test_a_missing_model_folder_falls_back(embedder, tmp_path: Path) -> None:
    """The real loading path, from settings: the folder is not there."""
    missing = tmp_path / "no-such-model"
    settings = Settings(home=tmp_path / "home", rerank=RerankSettings(onnx_dir=missing))
    with Chitta.open(settings, embedder=embedder) as chitta:
        _remember_all(chitta)
        result = chitta.recall(QUERY, realm=REALM, limit=2)
        _assert_fell_back(chitta, result, "load failed: CHITTA_RERANK_ONNX_DIR: ")
        assert str(missing) in result.rerank.fallback and result.rerank.model == missing.name


def test_a_scorer_exception_falls_back(chitta: Chitta) -> None:
    def boom(documents: Sequence[str]) -> object:
        raise RuntimeError("onnxruntime: bad alloc")

    _with_reranker(chitta, StandIn(output=boom))
    result = chitta.recall(QUERY, realm=REALM, limit=2)
    _assert_fell_back(chitta, result, "scorer failed: RuntimeError: onnxruntime: bad alloc")
    assert result.rerank.candidates == len(MEMORIES)


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (lambda docs: np.zeros(len(docs) - 1), "malformed output: expected 8 logits"),
        (lambda docs: np.zeros((len(docs), 2)), "malformed output: expected 8 logits"),
        (lambda docs: [float("nan")] * len(docs), "malformed output: 8 of 8 logits are not"),
        (lambda docs: [1.0] * (len(docs) - 1) + [math.inf], "malformed output: 1 of 8"),
        (lambda docs: None, "malformed output: expected 8 logits, shape (8,) or (8, 1); got"),
    ],
    ids=["short", "two-columns", "nan", "inf", "none"],
)
def test_malformed_scores_fall_back(chitta: Chitta, output, reason: str) -> None:
    _with_reranker(chitta, StandIn(output=output))
    result = chitta.recall(QUERY, realm=REALM, limit=2)
    _assert_fell_back(chitta, result, reason)


def test_no_candidates_loads_nothing(chitta: Chitta) -> None:
    loads = []
    chitta.reranker = LazyCrossEncoder(
        RerankSettings(onnx_dir=Path("/m/ce")), load=lambda s: loads.append(s) or StandIn()
    )
    result = chitta.recall(QUERY, realm="empty", limit=2)
    assert result.hits == () and loads == []
    assert (result.rerank.applied, result.rerank.fallback) == (False, "no candidates")


def test_a_bad_limit_is_refused_in_the_callers_terms(chitta: Chitta) -> None:
    _with_reranker(chitta, StandIn())
    with pytest.raises(BadArgument, match="got 0"):
        chitta.recall(QUERY, realm=REALM, limit=0)


def test_the_daemon_recall_method_takes_rerank(chitta: Chitta) -> None:
    scorer = StandIn()
    _with_reranker(chitta, scorer)
    method = METHODS["recall"]
    with pytest.raises(BadArgument, match="rerank must be true or false"):
        check_params(method, {"query": QUERY, "rerank": "no"})
    off = method.call(chitta, {"query": QUERY, "realm": REALM, "limit": 2, "rerank": False})
    assert "rerank" not in off and scorer.seen == []
    on = method.call(chitta, {"query": QUERY, "realm": REALM, "limit": 2})
    assert on["ok"] and on["rerank"]["applied"] is True and scorer.seen == [len(MEMORIES)]

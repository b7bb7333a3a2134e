"""scoring.json: defaults without a file, values from one, and a specific error for each fault."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings, load_settings
from chitta.errors import BadConfig, InputError
from chitta.recall.scoring_config import DEFAULT, SEED_KIND_PRIORS, as_dict, load_scoring, parse


def write(home: Path, data: object) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "scoring.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return home


def test_no_file_means_the_seed_defaults(tmp_path: Path) -> None:
    config = load_scoring(tmp_path)
    assert config == DEFAULT
    assert dict(config.kind_priors) == dict(SEED_KIND_PRIORS)
    assert (config.replication_max, config.inhibition_threshold) == (0.0, 0.85)
    assert (config.inhibition_strength, config.hebbian_step) == (0.7, 0.03)


def test_file_values_override_and_named_kinds_merge(tmp_path: Path) -> None:
    home = write(tmp_path, {
        "kind_priors": {"episode": 1.0, "belief": 1.2},
        "actr": {"weight": 0.2, "decay": 0.4},
        "bounds": {"min": 0.6, "max": 2.0},
        "inhibition": {"threshold": 0.9},
        "hebbian": {"top": 3},
        "replication_max": 1.15,
    })  # fmt: skip
    config = load_scoring(home)
    assert config.prior("episode") == 1.0 and config.prior("belief") == 1.2
    assert config.prior("correction") == 1.3  # unnamed kinds keep the seed's prior
    assert (config.actr_weight, config.actr_decay) == (0.2, 0.4)
    assert (config.bounds_min, config.bounds_max) == (0.6, 2.0)
    assert (config.inhibition_threshold, config.inhibition_strength) == (0.9, 0.7)
    assert config.hebbian_top == 3 and isinstance(config.hebbian_top, int)
    assert config.replication_max == 1.15
    assert parse(as_dict(config)) == config  # the documented shape round-trips


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not valid JSON"),
        ([1, 2], "must hold a JSON object"),
        ({"weights": {}}, "unknown key 'weights'"),
        ({"actr": {"wieght": 0.1}}, r"unknown key 'actr.wieght'; actr has: decay, reference_s"),
        ({"actr": 0.1}, "actr must be an object"),
        ({"kind_priors": {"corection": 1.3}}, "unknown kind 'kind_priors.corection'"),
        ({"kind_priors": [1.3]}, "kind_priors must be an object"),
        ({"kind_priors": {"correction": 3}}, r"kind_priors.correction must be between 0.5 and 1.5"),
        ({"strength": {"weight": 0.5}}, r"strength.weight must be between 0 and 0.25"),
        ({"tier": {"weight": "high"}}, "tier.weight must be a number"),
        ({"tier": {"weight": True}}, "tier.weight must be a number"),
        ({"hebbian": {"top": 2.5}}, "hebbian.top must be a whole number"),
        ({"inhibition": {"threshold": 1.0}}, "inhibition.threshold must be between"),
        ({"replication_max": 0.9}, "replication_max must be between 1 and 1.5"),
        ({"bounds": {"min": 1.0, "max": 1.0}, "kind_priors": {}}, None),
        ({"bounds": {"min": 0.9, "max": 0.95}}, r"bounds.max must be between 1 and 4"),
    ],
)
def test_every_fault_is_a_specific_error(tmp_path: Path, data: object, message: str | None) -> None:
    home = write(tmp_path, data)
    if message is None:
        load_scoring(home)  # a valid edge: min = max = 1 turns every factor off
        return
    with pytest.raises(BadConfig, match=message) as info:
        load_scoring(home)
    assert isinstance(info.value, InputError) and info.value.code == "bad_config"


def test_replication_max_from_the_environment_overrides_the_file(tmp_path: Path) -> None:
    home = write(tmp_path, {"replication_max": 1.1})
    switches = load_settings({"CHITTA_HOME": str(home), "CHITTA_REPLICATION_MAX": "1.15"}).recall
    assert switches.replication_max == 1.15
    assert load_scoring(home, switches.replication_max).replication_max == 1.15
    assert load_settings({"CC_SOUL_REPLICATION_MAX": "0"}).recall.replication_max == 0.0
    assert load_settings({}).recall.replication_max is None
    with pytest.raises(BadConfig, match="CHITTA_REPLICATION_MAX must be between 1 and 1.5"):
        load_settings({"CHITTA_REPLICATION_MAX": "2"})
    with pytest.raises(InputError, match="CHITTA_REPLICATION_MAX must be a number"):
        load_settings({"CHITTA_REPLICATION_MAX": "lots"})


def test_chitta_open_reads_the_homes_file_and_refuses_a_bad_one(tmp_path: Path, embedder) -> None:
    home = write(tmp_path / "home", {"hebbian": {"step": 0.05}})
    with Chitta.open(Settings(home=home), embedder=embedder) as c:
        assert c.scoring.hebbian_step == 0.05
    write(home, {"hebbian": {"step": -1}})
    with pytest.raises(BadConfig, match="hebbian.step"):
        Chitta.open(Settings(home=home), embedder=embedder)


def test_the_provenance_factor_of_the_assistants_text_is_bounded(tmp_path: Path) -> None:
    assert load_scoring(tmp_path).trust["assistant"] == 0.8
    assert parse({"provenance": {"assistant": 1.0}}).trust["assistant"] == 1.0
    with pytest.raises(BadConfig, match="provenance.assistant must be between 0.5 and 1.2"):
        parse({"provenance": {"assistant": 1.3}})


def test_trust_by_default_puts_the_user_above_the_assistant_above_tools_above_the_web() -> None:
    trust = parse({}).trust
    assert trust["user"] == trust["stated"] == 1.0
    assert trust["user"] > trust["assistant"] > trust["tool"] > trust["url"] >= 0.5


def test_a_per_source_trust_wins_over_its_kinds_and_the_longest_prefix_wins() -> None:
    config = parse({"provenance": {"url": 0.7, "sources": {
        "url:https://docs.python.org/": 1.1, "url:https://docs.python.org/2/": 0.5}}})  # fmt: skip
    assert config.trusted("url", "url:https://docs.python.org/3/library/json.html") == 1.1
    assert config.trusted("url", "url:https://docs.python.org/2/library/json.html") == 0.5
    assert config.trusted("url", "url:https://example.org/") == 0.7
    assert config.trusted("user", None) == 1.0
    assert as_dict(config)["provenance"]["sources"]["url:https://docs.python.org/"] == 1.1


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"web": 0.5}, "unknown key 'provenance.web'"),
        ({"tool": True}, "provenance.tool must be a number"),
        ({"sources": {"no-kind": 1.0}}, "not a source prefix"),
        ({"sources": {"url:x": 2.0}}, "between 0.5 and 1.2"),
        ({"sources": ["url:x"]}, "provenance.sources must be an object"),
        ("high", "provenance must be an object"),
    ],
)
def test_a_bad_provenance_section_is_refused_naming_the_key(section, message) -> None:
    with pytest.raises(BadConfig, match=message):
        parse({"provenance": section})


def test_a_question_to_the_agent_lifts_the_assistants_trust_and_never_lowers_it() -> None:
    asked = DEFAULT.asked_of_agent()
    assert asked.trust["assistant"] == 1.0 and DEFAULT.trust["assistant"] == 0.8
    assert {k: v for k, v in asked.trust.items() if k != "assistant"} == {
        k: v for k, v in DEFAULT.trust.items() if k != "assistant"}  # fmt: skip
    trusting = parse({"provenance": {"assistant": 1.1}})
    assert trusting.asked_of_agent().trust["assistant"] == 1.1
    off = replace(DEFAULT, asked_agent_trust=None)
    assert off.asked_of_agent().trust["assistant"] == 0.8

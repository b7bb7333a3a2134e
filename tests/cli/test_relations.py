"""`chitta triplet …` and `chitta analogy` in process (click's runner), on a real store in a
temporary home: with no daemon (each command opens the store itself) and through a real
daemon, with the same assertions."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from chitta.cli import main

Run = Callable[..., Result]


@pytest.fixture(params=["in-process", "daemon"])
def run(request, tmp_path: Path, launch) -> Run:
    """``run(*args, code=0)``: the command's result, its exit code checked; with no daemon
    (each command opens the store) and through a real daemon serving the home's store."""
    if request.param == "daemon":
        launch(tmp_path / "home")
    return runner(tmp_path)


@pytest.fixture
def run_alone(tmp_path: Path) -> Run:
    """As ``run``, with no daemon: for a home that has no store yet."""
    return runner(tmp_path)


def runner(tmp_path: Path) -> Run:
    env = {k: None for k in os.environ if k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(tmp_path / "home")
    runner = CliRunner(env=env)

    def call(*args: str, code: int = 0) -> Result:
        result = runner.invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == code, (args, result.output)
        return result

    return call


def _json(run: Run, *args: str) -> dict:
    data = json.loads(run(*args, "--json").stdout)
    assert data.pop("ok") is True
    return data


def _capitals(run: Run) -> dict[str, str]:
    """France and Italy with their capitals, written as a user might; the edges' ids."""
    france = run("triplet", "add", "  France ", "Capital Of", "Paris").stdout.split()[0]
    italy = run("triplet", "add", "italy", "capital-of", "ROME", "--weight", "0.9",
                "--valid-from", "2020-01-01").stdout.split()[0]  # fmt: skip
    return {"france": france, "italy": italy}


def test_add_with_odd_casing_is_one_edge_and_lists(run: Run) -> None:
    ids = _capitals(run)
    again = run("triplet", "add", "FRANCE", "capital_of", "paris").stdout
    assert again.startswith(ids["france"]) and "already stored" in again
    edges = _json(run, "triplet", "list")["triplets"]
    assert [t["id"] for t in edges] == [ids["france"], ids["italy"]]  # newest first
    assert {t["predicate_key"] for t in edges} == {"capital_of"}
    italy = edges[1]
    assert (italy["subject"], italy["predicate"], italy["object"]) == ("italy", "capital-of",
                                                                       "ROME")  # fmt: skip
    assert italy["weight"] == 0.9 and italy["valid_from"] == "2020-01-01T00:00:00.000Z"
    assert italy["invalidated_at"] is None and italy["realm"] == "default"
    plain = run("triplet", "list", "--predicate", "CAPITAL OF", "--subject", "ITALY").stdout
    assert plain.splitlines() == [
        f"{ids['italy']}  italy -[capital-of]-> ROME  (weight 0.9, from 2020-01-01T00:00:00.000Z)"
    ]
    added = _json(run, "triplet", "add", "Spain", "borders", "France", "--realm", "eu")
    assert added["existing"] is False and added["triplet"]["realm"] == "eu"
    assert _json(run, "triplet", "list", "--realm", "eu")["triplets"] == [added["triplet"]]
    assert "no triplets match" in run("triplet", "list", "--object", "nowhere").stderr


def test_analogy_answers_with_its_supports(run: Run) -> None:
    ids = _capitals(run)
    mid = run("remember", "Paris has been the capital of France since 987").stdout.strip()
    sourced = _json(run, "triplet", "add", "Italy", "capital_of", "Roma", "--weight", "0.5",
                    "--source-memory", mid)  # fmt: skip
    assert sourced["triplet"]["source_memory"] == mid
    text = run("analogy", "france", "PARIS", "Italy").stdout.splitlines()
    assert text[0] == "france : PARIS :: Italy : ?   (over capital_of)"
    assert text[1] == " 1. ROME  (score 0.9)"
    assert text[2].split() == ["capital_of:", "a->b", "France", "->", "Paris", "(weight", "1,",
                               "source", "none,", f"{ids['france']})"]  # fmt: skip
    assert text[3].split()[:4] == ["c->d", "italy", "->", "ROME"]
    assert text[4] == " 2. Roma  (score 0.5)"
    assert f"source {mid}" in text[6]
    data = _json(run, "analogy", "france", "paris", "italy", "--limit", "1")
    assert (data["abstained"], data["reason_code"], data["reason"]) == (False, None, None)
    assert data["predicates"] == ["capital_of"] and data["bounded"] is False
    assert data["resolved"] == {"a": "france", "b": "paris", "c": "italy"}
    [answer] = data["answers"]
    assert (answer["entity"], answer["key"], answer["score"]) == ("ROME", "rome", 0.9)
    [support] = answer["supports"]
    assert support["predicate"] == "capital_of"
    assert (support["ab"]["id"], support["cd"]["id"]) == (ids["france"], ids["italy"])


def test_an_abstention_is_an_answer_with_its_reason(run: Run) -> None:
    _capitals(run)
    run("triplet", "add", "Spain", "borders", "France")
    cases = {
        ("france", "paris", "atlantis"): ("unknown_entity", "c 'atlantis'"),
        ("paris", "france", "italy"): ("a_b_unrelated", "the other way"),
        ("france", "paris", "spain"): ("c_no_edge", "its current edges are over: borders"),
    }
    for (a, b, c), (code, words) in cases.items():
        plain = run("analogy", a, b, c).stdout.splitlines()
        assert plain[1].startswith(f"abstained ({code}): ") and words in plain[1], plain
        data = _json(run, "analogy", a, b, c)
        assert (data["abstained"], data["reason_code"], data["answers"]) == (True, code, [])
        assert words in data["reason"]


def test_invalidate_keeps_the_edge_for_as_of_and_all(run: Run) -> None:
    ids = _capitals(run)
    done = _json(run, "triplet", "invalidate", ids["italy"], "--at", "2024-01-01")
    assert done["already"] is False
    assert done["triplet"]["invalidated_at"] == "2024-01-01T00:00:00.000Z"
    again = run("triplet", "invalidate", ids["italy"]).stdout
    assert again == f"{ids['italy']} was already invalidated at 2024-01-01T00:00:00.000Z\n"
    now = [t["id"] for t in _json(run, "triplet", "list")["triplets"]]
    every = [t["id"] for t in _json(run, "triplet", "list", "--all")["triplets"]]
    then = [t["id"] for t in _json(run, "triplet", "list", "--as-of", "2023-06-01")["triplets"]]
    assert (now, every, then) == ([ids["france"]], [ids["france"], ids["italy"]], [ids["italy"]])
    assert "until 2024-01-01T00:00:00.000Z" in run("triplet", "list", "--all").stdout
    assert _json(run, "analogy", "france", "paris", "italy")["reason_code"] == "c_no_edge"
    # France's edge was written now: as of mid-2023 it did not hold yet.
    assert _json(run, "analogy", "france", "paris", "italy", "--as-of", "2023-06-01")[
        "reason_code"] == "a_b_unrelated"  # fmt: skip
    hist = ("--realm", "hist")
    run("triplet", "add", "France", "capital_of", "Paris", "--valid-from", "1900-01-01", *hist)
    bonn = run("triplet", "add", "West Germany", "capital_of", "Bonn", "--valid-from",
               "1949-05-23", *hist).stdout.split()[0]  # fmt: skip
    run("triplet", "invalidate", bonn, "--at", "1990-10-03")
    past = _json(run, "analogy", "france", "paris", "west germany", "--as-of", "1980-01-01", *hist)
    assert past["as_of"] == "1980-01-01T00:00:00.000Z"
    assert [x["entity"] for x in past["answers"]] == ["Bonn"]
    assert _json(run, "analogy", "france", "paris", "west germany", *hist)["abstained"]


def test_aliases_join_names(run: Run) -> None:
    ids = _capitals(run)
    assert run("triplet", "alias", "The French Republic", "FRANCE").stdout == (
        "alias the french republic -> france\n"
    )
    listed = _json(run, "triplet", "aliases")["aliases"]
    assert [(a["alias"], a["alias_key"], a["canonical_key"]) for a in listed] == [
        ("The French Republic", "the french republic", "france")
    ]
    assert run("triplet", "aliases").stdout.startswith("the french republic -> france  (written")
    found = _json(run, "triplet", "list", "--subject", "the French republic")["triplets"]
    assert [t["id"] for t in found] == [ids["france"]]
    answer = _json(run, "analogy", "The French Republic", "paris", "italy")
    assert answer["resolved"]["a"] == "france" and answer["answers"][0]["entity"] == "ROME"
    assert _json(run, "triplet", "aliases", "--realm", "other")["aliases"] == []
    assert run("triplet", "unalias", "the french republic").stdout == (
        "removed the alias 'the french republic'\n"
    )
    assert _json(run, "triplet", "unalias", "the french republic") == {
        "alias": "the french republic", "removed": False,
    }  # fmt: skip
    assert "no aliases" in run("triplet", "aliases").stderr


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["triplet", "add", "  ", "calls", "b"], 2, "subject is empty"),
        (["triplet", "add", "a", "", "b"], 2, "predicate is empty"),
        (["triplet", "add", "a", "part (of)", "b"], 2, "is not a predicate"),
        (["triplet", "add", "a", "calls", "x" * 201], 2, "the limit is 200"),
        (["triplet", "add", "Parser", "relates_to", "parser"], 2, "to itself makes no sense"),
        (["triplet", "add", "a", "calls", "b", "--valid-from", "next tuesday"], 2,
         "valid_from 'next tuesday' is not a date"),
        (["triplet", "add", "a", "calls", "b", "--weight", "2"], 2, "weight must be at most 1"),
        (["triplet", "add", "a", "calls", "b", "--source-memory", "01NOSUCHMEMORY"], 3,
         "source_memory"),
        (["triplet", "add", "a", "calls", "b", "--realm", "bad realm"], 2, "realm"),
        (["triplet", "invalidate", "01NOSUCHTRIPLET"], 3, "no triplet '01NOSUCHTRIPLET'"),
        (["triplet", "list", "--all", "--as-of", "2024-01-01"], 2, "--as-of or --all"),
        (["triplet", "list", "--as-of", "someday"], 2, "as_of 'someday'"),
        (["triplet", "list", "--limit", "0"], 2, "limit"),
        (["triplet", "alias", "parser", "PARSER"], 2, "alias of itself"),
        (["analogy", "a", "", "c"], 2, "b is empty"),
        (["analogy", "a", "b", "c", "--limit", "101"], 2, "at most 100"),
    ],
)  # fmt: skip
def test_bad_input_is_refused_naming_it(run: Run, args: list[str], code: int, needle) -> None:
    run("triplet", "add", "Parser", "calls", "Parser")  # a store, and a self-loop that may be
    result = run(*args, code=code)
    assert needle in result.stderr and result.stdout == ""
    failed = json.loads(run(*args, "--json", code=code).stdout)
    assert failed["ok"] is False and needle in failed["message"] and failed["error"]


def test_invalidate_at_a_bad_time_names_it(run: Run) -> None:
    ids = _capitals(run)
    assert "at 'soon' is not a date" in run("triplet", "invalidate", ids["france"], "--at",
                                            "soon", code=2).stderr  # fmt: skip
    early = run("triplet", "invalidate", ids["italy"], "--at", "2019-01-01", code=2).stderr
    assert "before the edge's valid_from" in early
    assert _json(run, "triplet", "list", "--subject", "italy")["triplets"][0][
        "invalidated_at"] is None  # fmt: skip


def test_reads_need_a_store_and_do_not_make_one(run_alone: Run, tmp_path: Path) -> None:
    for args in (["triplet", "list"], ["analogy", "a", "b", "c"], ["triplet", "aliases"]):
        assert "no store at" in run_alone(*args, code=4).stderr
    assert not (tmp_path / "home").exists()


def test_every_command_and_option_has_help(run: Run) -> None:
    relations = main.commands["triplet"]
    for command in [*relations.commands.values(), main.commands["analogy"]]:
        assert command.help, command.name
        options = [p for p in command.params if p.param_type_name == "option"]
        assert all(option.help for option in options), command.name
    for name in relations.commands:
        assert run("triplet", name, "--help").stdout.startswith("Usage:")
    assert "abstains" in run("analogy", "--help").stdout

"""Triplets and analogies through a real daemon: the CLI's commands go through its methods
(the daemon holds the store), and the methods refuse bad parameters by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError


def chitta(
    home: Path, *args: str, code: int = 0, store: str | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    if store:  # a database store (tests/daemon/conftest.py daemon_store)
        env["CHITTA_STORE"] = store
    proc = subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == code, proc.stderr
    return proc


def test_triplet_commands_and_analogy_go_through_the_daemon(
    home: Path, launch, daemon_store
) -> None:
    launch(home, store=daemon_store)  # holds the store: an in-process open would be refused
    cli = partial(chitta, store=daemon_store)
    mid = cli(home, "remember", "Rome has been the capital of Italy since 1871").stdout.strip()
    france = json.loads(cli(home, "triplet", "add", "France", "Capital Of", "Paris",
                               "--json").stdout)  # fmt: skip
    assert france["ok"] and not france["existing"]
    italy = cli(home, "triplet", "add", "ITALY", "capital-of", "Rome", "--weight", "0.8",
                   "--source-memory", mid).stdout.split()[0]  # fmt: skip
    cli(home, "triplet", "alias", "Italia", "italy")
    answer = json.loads(cli(home, "analogy", "france", "paris", "italia", "--json").stdout)
    assert [x["entity"] for x in answer["answers"]] == ["Rome"]
    support = answer["answers"][0]["supports"][0]
    assert (support["ab"]["id"], support["cd"]["id"]) == (france["triplet"]["id"], italy)
    assert support["cd"]["source_memory"] == mid
    assert "c->d ITALY -> Rome" in cli(home, "analogy", "france", "paris", "italia").stdout

    assert f"invalidated {italy}" in cli(home, "triplet", "invalidate", italy).stdout
    abstained = cli(home, "analogy", "france", "paris", "italia").stdout
    assert "abstained (c_no_edge)" in abstained
    listed = json.loads(cli(home, "triplet", "list", "--all", "--json").stdout)
    assert {t["id"] for t in listed["triplets"]} == {france["triplet"]["id"], italy}

    bad = cli(home, "triplet", "add", "a", "calls", "b", "--valid-from", "soon", code=2)
    assert "valid_from 'soon' is not a date" in bad.stderr
    # triplet_not_found exits 3 through the daemon as it does in process
    missing = cli(home, "triplet", "invalidate", "01NOSUCHTRIPLET", code=3)
    assert "no triplet '01NOSUCHTRIPLET'" in missing.stderr

    status = json.loads(cli(home, "status", "--json").stdout)
    methods = status["daemon"]["methods"]
    assert methods["add_triplet"]["requests"] == 3  # two edges and the bad valid_from
    assert methods["recall_analogy"]["requests"] == 3
    assert methods["invalidate_triplet"]["requests"] == 2
    assert {"alias_entity", "find_triplets"} <= set(methods)


def test_the_methods_name_a_bad_parameter(daemon: Path) -> None:
    with DaemonClient(daemon) as client:
        cases = [
            ("add_triplet", {"subject": "a", "predicate": "calls"}, "'object'"),
            (
                "add_triplet",
                {"subject": "a", "predicate": "calls", "object": "b", "wieght": 0.5},
                "unknown parameter 'wieght'",
            ),  # fmt: skip
            (
                "add_triplet",
                {"subject": "a", "predicate": "calls", "object": "b", "weight": "heavy"},
                "weight must be a number",
            ),  # fmt: skip
            (
                "add_triplet",
                {"subject": "", "predicate": "calls", "object": "b"},
                "subject is empty",
            ),
            ("recall_analogy", {"a": "x", "b": "y"}, "'c'"),
            ("recall_analogy", {"a": "x", "b": "y", "c": "z", "as_of": "then"}, "as_of 'then'"),
            ("invalidate_triplet", {"id": 7}, "id must be text"),
            # JSON "\ud800" decodes to a lone surrogate: a bad name, not an internal error.
            (
                "add_triplet",
                {"subject": "Ber\ud800lin", "predicate": "calls", "object": "b"},
                "not Unicode text",
            ),  # fmt: skip
        ]
        for method, params, needle in cases:
            with pytest.raises(DaemonError) as caught:
                client.call(method, **params)
            assert needle in str(caught.value), (method, params)
            assert caught.value.rpc_code == protocol.INVALID_PARAMS
        done = client.call("recall_analogy", a="x", b="y", c="z")
        assert done["abstained"] and done["reason_code"] == "unknown_entity"
        # Epoch milliseconds may come as a JSON float (1.7e12), as parse_time reads them.
        added = client.call("add_triplet", subject="a", predicate="calls", object="b",
                            valid_from=1.7e12)  # fmt: skip
        assert added["triplet"]["valid_from"] == "2023-11-14T22:13:20.000Z"
        assert client.call("find_triplets", as_of=1.7e12 + 1.0)["triplets"] == [added["triplet"]]

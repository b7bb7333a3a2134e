"""Calibration data: golden files and benchmark runs, with every bad line named."""

import json
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.errors import BadArgument
from chitta.recall.confidence.golden import (
    GoldenQuery,
    found_of,
    held_of,
    measure,
    pairs_from_run,
    read_golden,
)


def test_a_golden_file_reads_queries_gold_ids_and_realms() -> None:
    lines = [
        '{"query": "which port?", "gold": ["01A"], "realm": "infra"}',
        "",
        '{"query": "capital of Mongolia?", "gold": []}',
    ]
    assert read_golden(lines) == [
        GoldenQuery("which port?", ("01A",), "infra"),
        GoldenQuery("capital of Mongolia?", (), "default"),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{nope", "line 1 is not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"query": "q", "gold": [], "why": 1}', "unknown field 'why'"),
        ('{"gold": []}', "non-empty 'query'"),
        ('{"query": "  ", "gold": []}', "non-empty 'query'"),
        ('{"query": "q"}', "'gold': a list"),
        ('{"query": "q", "gold": "01A"}', "'gold': a list"),
        ('{"query": "q", "gold": [1]}', "'gold': a list"),
        ('{"query": "q", "gold": [], "realm": ""}', "'realm'"),
    ],
)
def test_a_bad_line_is_named(line: str, message: str) -> None:
    with pytest.raises(BadArgument, match=message):
        read_golden([line], "g.jsonl")


def test_an_empty_golden_file_is_refused() -> None:
    with pytest.raises(BadArgument, match="holds no queries"):
        read_golden(["", "  "])


def test_measure_recalls_each_query_and_notes_its_top_three(chitta: Chitta) -> None:
    port = chitta.remember("The staging Postgres listens on port 6543", realm="infra").id
    chitta.remember("Kafka retention on the events topic is seven days", realm="infra")
    pairs = measure(
        chitta,
        [
            GoldenQuery("which port does staging postgres use?", (port,), "infra"),
            GoldenQuery("capital of Mongolia?", (), "infra"),
        ],
    )
    assert [p.hit3 for p in pairs] == [True, False]
    assert [p.unanswerable for p in pairs] == [False, True]
    assert pairs[0].raw > pairs[1].raw
    # How much of each question the first hits hold: most of the first, none of the other's.
    assert pairs[0].found >= 2 / 3 and pairs[1].found == 1 / 4
    # And how many of them the first hit holds: "staging", "postgres" and "port" at least.
    assert pairs[0].held >= 2 and pairs[1].held == 0


def test_a_gold_id_not_in_the_store_or_the_realm_is_named(chitta: Chitta) -> None:
    with pytest.raises(BadArgument, match="gold memory 01NOPE .* is not in the store"):
        measure(chitta, [GoldenQuery("q", ("01NOPE",))])
    mid = chitta.remember("The staging Postgres listens on port 6543", realm="infra").id
    with pytest.raises(BadArgument, match="is in realm 'infra', but the query asks realm 'ops'"):
        measure(chitta, [GoldenQuery("q", (mid,), "ops")])


def test_measuring_leaves_no_access_history(chitta: Chitta) -> None:
    mid = chitta.remember("The staging Postgres listens on port 6543", realm="infra").id
    measure(chitta, [GoldenQuery("staging postgres port", (mid,), "infra")])
    assert chitta.store.access_history([mid])[mid].count == 0
    chitta.recall("staging postgres port", realm="infra")  # an ordinary recall does leave it
    assert chitta.store.access_history([mid])[mid].count == 1


def test_pairs_from_a_benchmark_run(tmp_path: Path) -> None:
    run = tmp_path / "abstain.json"
    run.write_text(
        json.dumps(
            {
                "pairs": [
                    {"raw": 0.5, "hit3": True, "answerable": True, "size": 600},
                    {"raw": 0.1, "hit3": False, "answerable": False, "size": 3},
                ]
            }
        )
    )
    assert [(p.raw, p.hit3, p.unanswerable, p.size) for p in pairs_from_run(run)] == [
        (0.5, True, False, 600),
        (0.1, False, True, 3),
    ]
    assert found_of(pairs_from_run(run)) is None  # a run from before the words were kept
    assert held_of(pairs_from_run(run)) is None  # the fit's ceiling is then one for all
    rows = [{"raw": 0.5, "hit3": True, "answerable": True, "size": 600, "found": 0.5},
            {"raw": 0.1, "hit3": False, "answerable": False, "size": 3, "found": 0}]  # fmt: skip
    run.write_text(json.dumps({"pairs": rows}))
    assert found_of(pairs_from_run(run)) == [0.5, 0.0]
    for row, held in zip(rows, (3, 0), strict=True):
        row["held"] = held
    run.write_text(json.dumps({"pairs": rows}))
    assert held_of(pairs_from_run(run)) == [3, 0]
    rows[1]["held"] = 1.5
    run.write_text(json.dumps({"pairs": rows}))
    with pytest.raises(BadArgument, match="malformed.*words held must be a whole number"):
        pairs_from_run(run)
    rows[1]["held"] = 0
    rows[1]["found"] = 2
    run.write_text(json.dumps({"pairs": rows}))
    with pytest.raises(BadArgument, match="malformed.*words found must be a number"):
        pairs_from_run(run)
    # A run from before the realm sizes were kept cannot fit a size-adjusted calibration.
    run.write_text(json.dumps({"pairs": [{"raw": 0.5, "hit3": True, "answerable": True}]}))
    with pytest.raises(BadArgument, match="no realm sizes"):
        pairs_from_run(run)
    run.write_text(json.dumps({"systems": {}}))
    with pytest.raises(BadArgument, match="no 'pairs'"):
        pairs_from_run(run)
    run.write_text(json.dumps({"pairs": [{"raw": 0.5}]}))
    with pytest.raises(BadArgument, match="malformed"):
        pairs_from_run(run)
    with pytest.raises(BadArgument, match="cannot read"):
        pairs_from_run(tmp_path / "missing.json")

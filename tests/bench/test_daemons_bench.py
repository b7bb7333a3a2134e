"""`chitta bench daemons` on a real database: each team's figures, and refusals of bad input."""

from __future__ import annotations

import pytest

from chitta.bench.daemons import Load, line, markdown, run
from chitta.errors import BadArgument


def test_a_team_of_two_daemons_is_measured(pg_url: str) -> None:
    said: list[str] = []
    figures = run(pg_url, [2], Load(clients=2, remembers=3, recalls=2), tick=said.append)
    team = figures["teams"]["2"]
    assert (team["daemons"], team["clients"]) == (2, 4)
    assert (team["remember"]["requests"], team["recall"]["requests"]) == (12, 8)
    assert team["remember"]["errors"] == team["recall"]["errors"] == 0
    assert team["remember"]["per_s"] > 0 and team["recall"]["latency_ms"]["p50"] > 0
    assert said == [line(team)]
    assert "| 2 | 4 |" in markdown(figures)
    assert "s3cret" not in str(figures) and figures["store"].startswith("postgresql://")


@pytest.mark.parametrize(
    ("url", "sizes", "load"),
    [("/tmp/x.db", [1], Load()), (None, [0], Load()), (None, [], Load()),
     (None, [1], Load(clients=0))],
)  # fmt: skip
def test_bad_input_is_refused_before_anything_starts(url, sizes, load) -> None:
    with pytest.raises(BadArgument):
        run(url, sizes, load, tick=print)

"""`chitta bench daemon` end to end on a small store: a real daemon, real clients."""

from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.bench.daemon import run
from chitta.bench.environment import default_locomo
from chitta.config import Settings
from chitta.errors import BadArgument


@pytest.mark.skipif(not default_locomo().is_file(), reason="needs ../shared/data/locomo10.json")
def test_the_daemon_benchmark_reports_latency_and_throughput(tmp_path: Path, embedder) -> None:
    home = tmp_path / "home"
    with Chitta.open(Settings(home=home), embedder=embedder) as chitta:
        topics = ["a pottery class", "the lake camping trip", "her adoption papers",
                  "a charity run", "painting a sunrise", "the LGBTQ support group"]  # fmt: skip
        for topic in topics:
            chitta.remember(f"Caroline talked about {topic} last week", realm="bench")
    figures = run(home, "default", "bench", default_locomo(), queries=3, clients=2,
                  per_client=2, hooks=2)  # fmt: skip
    assert figures["memories"] == len(topics) and figures["errors"] == 0
    assert figures["concurrent"]["requests"] == 4
    assert figures["single_client_ms"]["p50"] > 0
    assert figures["hook_prompt_wall_ms"]["p50"] > 0
    assert figures["first_answer_s"] >= figures["daemon_start_s"] > 0
    assert figures["warmup"]["state"] == "ready" and "vectors" in figures["warmup"]["parts_ms"]
    assert not (home / "chitta.sock").exists()  # the daemon was stopped


def test_a_home_without_the_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadArgument, match="no store 'default'"):
        run(tmp_path, "default", "bench", default_locomo(), queries=1, clients=1, per_client=1)

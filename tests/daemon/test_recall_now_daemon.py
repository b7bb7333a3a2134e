"""Recall's ``now`` over the daemon's RPC and the CLI (issue 19): a given "now" is what a
relative time cue counts back from; a bad one is a clear error naming it, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.daemon.client import DaemonClient
from chitta.errors import BadArgument, BadDate

TRIP = "We drove to the coast for the weekend trip with the dog"
LAST_WEEK = {"ago": {"unit": "weeks", "value": 1}, "confidence": "sure"}
#: A week long, centred a week before 2023-05-30T03:16 UTC.
PERIOD = {"after": "2023-05-19T15:16:00.000Z", "before": "2023-05-26T15:16:00.000Z"}


def cli(home: Path, *args: str, store: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["CHITTA_HOME"] = str(home)
    if store:
        env["CHITTA_STORE"] = store
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


def test_rpc_reads_a_cue_against_the_given_now_and_refuses_a_bad_one(
    daemon: Path,
) -> None:
    with DaemonClient(daemon) as client:
        client.call("remember", content=TRIP, realm="life", event_time="2023-05-23")
        reply = client.call("recall", query="weekend trip", realm="life", time_cue=LAST_WEEK,
                            now="2023-05-30T03:16")  # fmt: skip
        assert reply["time_cue"]["period"] == PERIOD
        assert client.call("recall", query="weekend trip", realm="life", time_cue=LAST_WEEK,
                           now=1685416560000)["time_cue"]["period"] == PERIOD  # fmt: skip
        with pytest.raises(BadDate, match="now 'last tuesday' is not a date"):
            client.call("recall", query="weekend trip", realm="life", now="last tuesday")
        with pytest.raises(BadArgument, match="now must be an ISO 8601 time"):
            client.call("recall", query="weekend trip", realm="life", now=True)


@pytest.mark.parametrize("served", [False, True], ids=["in-process", "through-the-daemon"])
def test_cli_now_and_a_bad_now(home: Path, launch, daemon_store: str | None,
                               served: bool) -> None:  # fmt: skip
    if served:
        launch(home, store=daemon_store)
    stored = cli(home, "remember", TRIP, "--realm", "life", "--event-time", "2023-05-23",
                 store=daemon_store)  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    done = cli(home, "recall", "weekend trip", "--realm", "life", "--json", "--now",
               "2023-05-30T03:16", "--time-cue", json.dumps(LAST_WEEK),
               store=daemon_store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["time_cue"]["period"] == PERIOD
    bad = cli(home, "recall", "weekend trip", "--realm", "life", "--now", "next friday",
              store=daemon_store)  # fmt: skip
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "now 'next friday' is not a date" in bad.stderr


def test_the_client_api_passes_now_to_recall_and_reconstruct(daemon: Path, home: Path) -> None:
    from chitta.remote import DaemonChitta

    chitta = DaemonChitta(daemon, realm="life", home=home)
    chitta.remember(TRIP, event_time="2023-05-23")
    asked = chitta.recall("weekend trip", time_cue=LAST_WEEK, now="2023-05-30T03:16")
    assert [h.memory.content for h in asked.hits] == [TRIP]
    quoted = chitta.reconstruct("weekend trip", time_cue=LAST_WEEK, now=1685416560000)
    assert [h.memory.content for h in quoted.recall.hits] == [TRIP]
    # The daemon reads them: a bad one is its refusal, named.
    with pytest.raises(BadDate, match="now 'last tuesday' is not a date"):
        chitta.recall("weekend trip", now="last tuesday")
    with pytest.raises(BadDate, match="now 'soon' is not a date"):
        chitta.reconstruct("weekend trip", now="soon")

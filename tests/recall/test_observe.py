"""Admission reasons, drop counts, and the two diagnostics (which never print stored text)."""

import pytest

from chitta.api import Chitta
from chitta.config import RecallSwitches

TEXTS = [
    "We chose SQLite WAL over a custom log because crash recovery comes free",
    "The deploy script lives in ops/deploy.sh and needs the VPN",
    "Alice prefers tabs over spaces in Python code",
]


@pytest.fixture
def stocked(chitta: Chitta) -> Chitta:
    for text in TEXTS:
        chitta.remember(text, realm="demo")
    return chitta


def test_every_hit_has_a_reason_and_every_drop_a_cause(stocked: Chitta) -> None:
    result = stocked.recall("SQLite write-ahead log", realm="demo", limit=1)
    assert result.hits[0].reason == "sem+kw"
    assert result.dropped == {"cut": 2}
    assert [d.outcome for d in result.decisions] == ["admitted", "cut", "cut"]
    old = result.hits[0].memory.id
    stocked.remember("We moved from SQLite WAL to PostgreSQL for team sharing", realm="demo",
                     supersedes=old)  # fmt: skip
    after = stocked.recall("SQLite write-ahead log", realm="demo", limit=10)
    assert after.dropped == {"superseded": 1}
    assert old not in [h.memory.id for h in after.hits]


def test_process_ablation_switch_turns_lanes_off(stocked: Chitta) -> None:
    stocked.switches = RecallSwitches(ablate_lanes=("sem",))
    result = stocked.recall("SQLite", realm="demo")
    assert result.lanes_run == ("kw", "tag", "ctx", "common", "code", "when", "dated")
    assert all("sem" not in h.lanes for h in result.hits)


def test_profile_and_admit_debug_write_figures_not_text(stocked: Chitta, capsys) -> None:
    stocked.switches = RecallSwitches(profile=True, admit_debug=True)
    result = stocked.recall("SQLite write-ahead log", realm="demo", limit=1)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("chitta recall profile: strategy=hybrid plan=")
    assert " embed=" in err[0]
    assert "total=" in err[0]
    admits = [line for line in err if line.startswith("chitta admit:")]
    assert len(admits) == len(result.decisions) == 3
    assert admits[0].endswith("admitted") and result.hits[0].memory.id in admits[0]
    assert " final=" in admits[0] and " factors=kind:1.050," in admits[0]
    printed = "\n".join(err)
    for word in ("SQLite", "crash", "deploy", "Alice", "tabs"):  # from the stored texts
        assert word not in printed


def test_no_diagnostics_unless_asked(stocked: Chitta, capsys) -> None:
    stocked.recall("SQLite", realm="demo")
    assert capsys.readouterr().err == ""

"""The progress bar of large imports, and the JSON shape of a recall."""

import io
from pathlib import Path

from rich.console import Console

from chitta.api import Chitta
from chitta.cli.render import PROGRESS_MIN_BYTES, import_progress
from chitta.wire import result_to_dict


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100), out


def test_large_file_on_a_terminal_gets_a_progress_bar(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * PROGRESS_MIN_BYTES)
    console, out = _terminal()
    with import_progress(big, quiet=False, console=console) as advance:
        assert advance is not None
        advance(PROGRESS_MIN_BYTES)
    assert "importing big.jsonl" in out.getvalue()


def test_small_files_pipes_and_json_get_none(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * PROGRESS_MIN_BYTES)
    console, _ = _terminal()
    with import_progress(small, quiet=False, console=console) as advance:
        assert advance is None
    with import_progress(big, quiet=True, console=console) as advance:
        assert advance is None
    pipe = Console(file=io.StringIO(), force_terminal=False)
    with import_progress(big, quiet=False, console=pipe) as advance:
        assert advance is None


def test_recall_json_names_lanes_and_shares(chitta: Chitta) -> None:
    chitta.remember("We chose SQLite WAL over a custom log", realm="demo")
    data = result_to_dict(chitta.recall("write-ahead log SQLite", realm="demo"))
    hit = data["hits"][0]
    assert hit["rank"] == 1 and set(hit["lanes"]) == {"sem", "kw"}
    assert abs(hit["score"] - sum(x["contribution"] for x in hit["lanes"].values())) < 1e-5
    # The final score (after scoring and inhibition) sits beside the fused one, with its factors.
    assert hit["factors"]["kind"] == 1.05  # an insight
    product = hit["factors"]["product"] * hit["factors"]["inhibition"]
    assert abs(hit["final"] - hit["score"] * product) < 1e-5
    assert data["scope"] == {"realm": "demo", "agent_id": None, "channel": None}

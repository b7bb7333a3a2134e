"""The progress bar of long work, and the JSON shape of a recall."""

import io

from rich.console import Console

from chitta.api import Chitta
from chitta.cli.render import progress_bar
from chitta.wire import result_to_dict


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100), out


def test_long_work_on_a_terminal_gets_a_progress_bar() -> None:
    console, out = _terminal()
    with progress_bar("import_memories", "bytes", quiet=False, console=console) as advance:
        assert advance is not None
        advance(512, 1024)
        advance(1024, 1024)
    assert "import memories" in out.getvalue()
    console, out = _terminal()
    with progress_bar("reembed", "memories", quiet=False, console=console) as advance:
        advance(3, 7)
    assert "3/7" in out.getvalue()


def test_pipes_json_and_short_work_get_none() -> None:
    console, _ = _terminal()
    with progress_bar("import_memories", "bytes", quiet=True, console=console) as advance:
        assert advance is None
    with progress_bar("recall", None, quiet=False, console=console) as advance:
        assert advance is None
    pipe = Console(file=io.StringIO(), force_terminal=False)
    with progress_bar("import_memories", "bytes", quiet=False, console=pipe) as advance:
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


def test_a_possibly_outdated_hit_points_at_the_newer_one(capsys, monkeypatch) -> None:
    from chitta.cli.render import print_hits

    monkeypatch.setenv("COLUMNS", "200")  # one line per row

    def hit(rank: int, id_: str, **fields: object) -> dict:
        return {"rank": rank, "id": id_, "score": 0.1, "final": 0.1, "factors": {},
                "lanes": {}, "kind": "episode", "content": f"text {id_}", **fields}  # fmt: skip

    data = {"confidence": None, "corrections": [], "scope": {"realm": "me"}, "candidates": 3,
            "dropped": {}, "strategy": "hybrid", "lanes_run": ["sem"], "timing_ms": {},
            "hits": [hit(1, "NEW"), hit(2, "OLD", newer="NEW"),
                     hit(3, "SUP", newer="GONE", superseded_by="GONE")]}  # fmt: skip
    print_hits(data)
    out = capsys.readouterr().out
    assert "(newer: #1) text OLD" in out
    assert "(superseded by GONE) text SUP" in out
    assert "text NEW" in out and "(newer" not in out.split("text NEW")[0]

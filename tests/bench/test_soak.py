"""`chitta bench soak` end to end for a few seconds: a real daemon under every kind of load,
killed and restarted, its figures written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_a_short_soak_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    argv = [sys.executable, "-m", "chitta", "bench", "soak", "--duration", "5", "--quiet", "1",
            "--clients", "2", "--flood", "60", "--nofile", "256", "--slow", "5", "--seed", "1",
            "--workdir", str(tmp_path / "work"), "--out", str(out)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert "| acknowledged writes / lost |" in done.stdout
    record = json.loads(out.read_text())
    assert out.with_suffix(".md").read_text() in done.stdout
    assert record["benchmark"] == "soak" and record["machine"]["loadavg_before"]
    requests, daemon = record["requests"], record["daemon"]
    assert requests["valid_served"] > 0 and requests["malformed_answered"] > 0
    assert set(requests["by_client"]) == {"valid", "frames", "flood", "slow", "partial",
                                          "oversized"}  # fmt: skip
    assert daemon["kills"] >= 1 and daemon["served_after_quiet"]
    acked = record["acknowledged"]
    assert acked["writes"] > 0 and acked["lost_total"] == 0, acked
    rss = record["rss"]
    assert {s[1] for s in rss["samples"]} >= {"kills", "warm", "hostile", "quiet"}
    assert rss["steady_mb"] > 0 and rss["peak_mb"] >= rss["steady_mb"] * 0.5
    assert rss["after_quiet_mb"] > 0

"""CHITTA_CLOCK_OFFSET_MS: one clock for the store, the hooks and the spool, moved to replay
history as it happened (the agent-day benchmark asks each question at its own date)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chitta.config import load_settings
from chitta.errors import BadConfig
from chitta.hooks.render import memory_line

DAY_MS = 86_400_000


def test_the_setting_is_read_and_bounded() -> None:
    assert load_settings({}).clock_offset_ms == 0
    assert load_settings({"CHITTA_CLOCK_OFFSET_MS": "-86400000"}).clock_offset_ms == -DAY_MS
    for bad in ("soon", "1e99", str(200 * 366 * DAY_MS)):
        with pytest.raises(BadConfig, match="CHITTA_CLOCK_OFFSET_MS"):
            load_settings({"CHITTA_CLOCK_OFFSET_MS": bad})


def test_an_age_is_told_by_the_clock_given() -> None:
    row = {"kind": "insight", "id": "x", "content": "c", "event_time": "2023-05-20T12:00:00Z"}
    then = datetime(2023, 5, 23, 12, tzinfo=UTC).timestamp()
    assert "3 days ago" in memory_line(row, 100, now_s=then)


def test_a_store_moved_back_dates_what_it_stores(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env |= {"CHITTA_HOME": str(tmp_path / "h"), "CHITTA_CLOCK_OFFSET_MS": str(-365 * DAY_MS)}

    def chitta(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                              text=True, env=env, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    mid = chitta("remember", "The ledger closes on the last Friday of the month").strip()
    created = json.loads(chitta("show", mid, "--json"))["memory"]["created_at"]
    year_ago = datetime.now(UTC).timestamp() - 365 * 86_400
    assert abs(datetime.fromisoformat(created).timestamp() - year_ago) < 600

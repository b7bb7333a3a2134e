"""`chitta hook post-edit` (PostToolUse) against a real daemon over its socket: an Edit of a
real file re-indexes it, silently; a file outside the indexed repositories is left alone;
with no daemon the request waits in the spool and the next daemon does it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from chitta.config import Settings
from chitta.daemon.client import DaemonClient

Hook = Callable[[dict], subprocess.CompletedProcess]
SOURCE = "def price(n):\n    return round(n * 2)\n"


def _env(home: Path, store: str | None) -> dict[str, str]:
    # os.environ carries PYTHONPATH, so the subprocess runs this worktree's code.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    chosen = {"CHITTA_STORE": store} if store else {}
    return {**env, "CHITTA_HOME": str(home), "CHITTA_REALM": "demo", **chosen}


@pytest.fixture
def hook(home: Path, daemon_store: str | None) -> Hook:
    def run(event: dict) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chitta", "hook", "post-edit"],
                              input=json.dumps(event), capture_output=True, text=True,
                              env=_env(home, daemon_store), timeout=120)  # fmt: skip

    return run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "prices.py").write_text(SOURCE)
    (root / "shop" / "cart.py").write_text(
        "from shop.prices import discount, price\n\n\n"
        "def total():\n    return price(1) + discount()\n"
    )
    who = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], [*who, "commit", "-qm", "1"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def edit_event(path: Path, tool: str = "Edit") -> dict:
    """What Claude Code sends a PostToolUse hook after an Edit (code.claude.com/docs/en/hooks)."""
    return {"session_id": "s1", "transcript_path": "/nowhere.jsonl", "cwd": str(path.parent),
            "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"file_path": str(path), "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": str(path), "success": True}}  # fmt: skip


def add_discount(repo: Path) -> Path:
    path = repo / "shop" / "prices.py"
    path.write_text(SOURCE + "\n\ndef discount():\n    return 0\n")
    return path


def found(socket: Path, name: str) -> list[str]:
    with DaemonClient(socket) as client:
        return [s["qualified"] for s in client.call("find_symbol", name=name,
                                                    realm="demo")["symbols"]]  # fmt: skip


def test_an_edit_re_indexes_the_file_silently(daemon: Path, hook: Hook, repo: Path) -> None:
    with DaemonClient(daemon) as client:
        client.call("code_index", path=str(repo), realm="demo")
    assert found(daemon, "discount") == []
    done = hook(edit_event(add_discount(repo)))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
    assert found(daemon, "discount") == ["shop.prices.discount"]
    with DaemonClient(daemon) as client:
        callees = client.call("symbol_callees", symbol="total", realm="demo")["symbols"]
    # The call in the file not edited resolves to the new function.
    assert {e["symbol"]["qualified"] for e in callees[0]["callees"]} == {
        "shop.prices.price", "shop.prices.discount"}  # fmt: skip


def test_files_outside_indexed_repositories_and_other_tools_are_left_alone(
    daemon: Path, hook: Hook, repo: Path, tmp_path: Path
) -> None:
    other = tmp_path / "loose.py"
    other.write_text("def loose():\n    pass\n")
    for event in (
        edit_event(other, "Write"),
        edit_event(add_discount(repo)),
        {"session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}},
    ):
        done = hook(event)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
    assert found(daemon, "loose") == found(daemon, "discount") == []  # the repo is not indexed


def test_with_no_daemon_the_re_index_waits_in_the_spool(
    home: Path, hook: Hook, repo: Path, launch, daemon_store: str | None,
    daemon_socket: Path, daemon_env: dict[str, str],
) -> None:  # fmt: skip
    index = subprocess.run([sys.executable, "-m", "chitta", "code", "index", str(repo),
                            "--realm", "demo"], capture_output=True, text=True,
                           env=daemon_env, timeout=120)  # fmt: skip
    assert index.returncode == 0, index.stderr
    done = hook(edit_event(add_discount(repo)))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
    spool = Settings(home=home, store=daemon_store or "default").spool_path
    (record,) = [json.loads(line) for line in spool.read_text().splitlines()]
    assert record["op"] == "code_reindex" and record["params"]["realm"] == "demo"
    launch(home, store=daemon_store)
    until = time.monotonic() + 60
    while not found(daemon_socket, "discount") and time.monotonic() < until:
        time.sleep(0.2)
    assert found(daemon_socket, "discount") == ["shop.prices.discount"]


def test_the_post_edit_path_imports_nothing_heavy(
    daemon: Path, home: Path, daemon_store: str | None, repo: Path
) -> None:
    heavy = (
        "numpy",
        "onnxruntime",
        "chitta.store.sqlite",
        "tree_sitter",
        "chitta.code.extract",
        "chitta.code.resolve",
        "chitta.code.reindex",
    )
    probe = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print('HEAVY', [m for m in {heavy!r} if m in sys.modules]))\n"
        "from chitta.cli import main\n"
        "sys.argv = ['chitta', 'hook', 'post-edit']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], input=json.dumps(edit_event(repo)),
                          capture_output=True, text=True, env=_env(home, daemon_store),
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == "HEAVY []\n"

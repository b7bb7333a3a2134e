"""The realm rule: an explicit argument, else CHITTA_REALM, else the git root's name, else
default — the same for the hooks, the MCP server, the CLI and the Python API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from chitta.config import load_settings
from chitta.scope import RealmChoice, resolve_realm


def repo(tmp_path: Path, name: str = "my project") -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def test_the_rules_in_order(tmp_path: Path) -> None:
    root = repo(tmp_path)
    deep = root / "src" / "pkg"
    assert resolve_realm("ops", {"CHITTA_REALM": "team"}, deep) == RealmChoice("ops", "argument")
    assert resolve_realm(None, {"CHITTA_REALM": "team"}, deep) == RealmChoice(
        "team", "CHITTA_REALM"
    )
    # A space is not allowed in a realm name: it becomes "-".
    assert resolve_realm(None, {}, deep) == RealmChoice("my-project", "git root", str(root))
    assert resolve_realm(None, {}, tmp_path / "plain") == RealmChoice()
    assert resolve_realm(None, {}, None).name == "default"


def test_older_spellings_of_the_variable_still_count(tmp_path: Path) -> None:
    for name in ("CC_SOUL_REALM", "CHITTA_HOOK_REALM"):
        assert resolve_realm(None, {name: "x"}, tmp_path) == RealmChoice("x", "CHITTA_REALM")


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    root = tmp_path / "wt-hooks"
    root.mkdir()
    (root / ".git").write_text("gitdir: /elsewhere\n")
    assert resolve_realm(None, {}, root / "missing" / "dir").name == "wt-hooks"


def test_the_settings_carry_the_realm_of_the_working_directory(tmp_path: Path) -> None:
    root = repo(tmp_path, "alpha")
    assert load_settings({}, cwd=root / "src").realm.name == "alpha"
    assert load_settings({"CHITTA_REALM": "beta"}, cwd=root).realm.rule == "CHITTA_REALM"


def chitta(cwd: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    proc = subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          text=True, cwd=cwd, env={**base, "CHITTA_HOME": str(home), **env},
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_cli_files_and_reads_under_the_git_root_and_status_says_so(tmp_path: Path) -> None:
    import json

    root, home = repo(tmp_path, "payments"), tmp_path / "home"
    mid = chitta(root / "src", home, "remember", "The payments service retries twice").stdout
    status = json.loads(chitta(root, home, "status", "--json").stdout)
    assert status["per_realm"] == {"payments": 1}
    assert status["realm"] == {"name": "payments", "rule": "git root", "where": str(root)}
    assert "realm payments (the name of the git root" in chitta(root, home, "status").stdout
    hits = json.loads(chitta(root, home, "recall", "payments retries", "--json").stdout)["hits"]
    assert [h["id"] for h in hits] == [mid.strip()]
    elsewhere = json.loads(chitta(tmp_path, home, "recall", "payments retries",
                                  "--json").stdout)  # fmt: skip
    assert elsewhere["scope"]["realm"] == "default" and elsewhere["hits"] == []
    named = json.loads(chitta(tmp_path, home, "recall", "payments retries", "--json",
                              CHITTA_REALM="payments").stdout)  # fmt: skip
    assert [h["id"] for h in named["hits"]] == [mid.strip()]

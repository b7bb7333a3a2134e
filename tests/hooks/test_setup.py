"""`chitta setup claude` in a temporary HOME: real processes, real files."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from chitta.hooks.install import EVENTS, is_chitta_hook, merge_hooks, remove_hooks
from chitta.hooks.setup import merge_mcp, remove_mcp

CHITTA = [sys.executable, "-m", "chitta"]
THEIR_HOOK = {"type": "command", "command": "notify-me"}
THEIR_SERVER = {"type": "stdio", "command": "other-mcp", "args": [], "env": {"K": "v"}}


@pytest.fixture
def run(tmp_path: Path):
    """``chitta ARGS`` with HOME a temporary folder, from ``cwd`` (default: that HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["HOME"] = str(tmp_path)

    def call(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*CHITTA, *args], capture_output=True, text=True, env=env,
            cwd=cwd or tmp_path, timeout=120,
        )  # fmt: skip

    return call


def _settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def _commands(data: dict, event: str) -> list[str]:
    return [h["command"] for g in data["hooks"][event] for h in g["hooks"]]


def _ours(data: dict) -> dict[str, str]:
    """Event -> chitta's one command there (fails on none or two)."""
    found = {}
    for event, name in EVENTS.items():
        (found[event],) = [c for c in _commands(data, event) if is_chitta_hook(c, name)]
    return found


def _existing(home: Path) -> tuple[dict, dict]:
    settings = {"model": "opus", "hooks": {"Stop": [{"hooks": [THEIR_HOOK]}]}}
    mcp = {"numStartups": 3, "projects": {"/x": {}}, "mcpServers": {"other": THEIR_SERVER}}
    _settings(home).parent.mkdir(parents=True)
    _settings(home).write_text(json.dumps(settings))
    (home / ".claude.json").write_text(json.dumps(mcp))
    (home / ".claude.json").chmod(0o640)
    return settings, mcp


def test_a_fresh_home_gets_the_hooks_and_the_server(run, tmp_path: Path) -> None:
    done = run("setup", "claude")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and "settings.json: hooks: added" in lines[0]
    assert ".claude.json: added the MCP server 'chitta'" in lines[1]
    commands = _ours(json.loads(_settings(tmp_path).read_text()))
    executable = shlex.split(commands["Stop"])[0]
    assert Path(executable).is_absolute() and Path(executable).name == "chitta"
    assert commands["UserPromptSubmit"] == f"{shlex.quote(executable)} hook prompt"
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["chitta"]
    assert server == {"type": "stdio", "command": executable, "args": ["mcp"], "env": {}}
    for path in (_settings(tmp_path), tmp_path / ".claude.json"):
        assert path.stat().st_mode & 0o777 == 0o600
    assert not list(tmp_path.rglob("*.bak-*"))  # nothing was replaced


def test_under_umask_000_the_files_and_the_folder_it_makes_are_owner_only(
    run, tmp_path: Path, umask0
) -> None:
    done = run("setup", "claude")
    assert done.returncode == 0, done.stderr
    assert _settings(tmp_path).parent.stat().st_mode & 0o777 == 0o700  # ~/.claude, made here
    for path in (_settings(tmp_path), tmp_path / ".claude.json"):
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_existing_files_keep_everything_else_and_are_backed_up(run, tmp_path: Path) -> None:
    settings, mcp = _existing(tmp_path)
    done = run("setup", "claude")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("the previous file is kept as") == 2
    data = json.loads(_settings(tmp_path).read_text())
    assert data["model"] == "opus" and _commands(data, "Stop")[0] == "notify-me"
    _ours(data)
    config = json.loads((tmp_path / ".claude.json").read_text())
    assert config["numStartups"] == 3 and config["projects"] == {"/x": {}}
    assert config["mcpServers"]["other"] == THEIR_SERVER and "chitta" in config["mcpServers"]
    assert (tmp_path / ".claude.json").stat().st_mode & 0o777 == 0o640  # the mode is kept
    (backup,) = _settings(tmp_path).parent.glob("settings.json.bak-*")
    assert json.loads(backup.read_text()) == settings
    (backup,) = tmp_path.glob(".claude.json.bak-*")
    assert json.loads(backup.read_text()) == mcp


def test_a_second_run_changes_and_writes_nothing(run, tmp_path: Path) -> None:
    _existing(tmp_path)
    assert run("setup", "claude").returncode == 0
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = run("setup", "claude")
    assert again.returncode == 0
    assert again.stdout.count("nothing changed") == 2
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("which", "text", "message"),
    [
        ("settings", '{"model": "opus",', "not valid JSON"),
        ("mcp", '["a list"]', "does not hold a JSON object"),
        ("settings", '{"hooks": []}', "'hooks' is not a JSON object"),
        ("mcp", '{"mcpServers": "chitta"}', "'mcpServers' is not a JSON object"),
    ],
)
def test_a_bad_file_is_refused_and_nothing_is_written(
    run, tmp_path: Path, which: str, text: str, message: str
) -> None:
    _existing(tmp_path)
    bad = _settings(tmp_path) if which == "settings" else tmp_path / ".claude.json"
    bad.write_text(text)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = run("setup", "claude")
    assert done.returncode == 2
    assert message in done.stderr and "nothing changed" in done.stderr
    # Neither file is written, the good one included: both are checked first.
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_uninstall_restores_the_rest_and_is_idempotent(run, tmp_path: Path) -> None:
    settings, mcp = _existing(tmp_path)
    assert run("setup", "claude").returncode == 0
    done = run("setup", "claude", "--uninstall")
    assert done.returncode == 0, done.stderr
    assert "removed chitta's hooks" in done.stdout and "removed the MCP server" in done.stdout
    assert json.loads(_settings(tmp_path).read_text()) == settings
    assert json.loads((tmp_path / ".claude.json").read_text()) == mcp
    backups = sorted(tmp_path.rglob("*.bak-*"))
    again = run("setup", "claude", "--uninstall")
    assert again.returncode == 0 and again.stdout.count("nothing changed") == 2
    assert sorted(tmp_path.rglob("*.bak-*")) == backups


def test_dry_run_prints_and_writes_nothing(run, tmp_path: Path) -> None:
    _existing(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = run("setup", "claude", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[dry run: not written]") == 2
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_project_scope_writes_at_the_git_root(run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    done = run("setup", "claude", "--project", cwd=repo / "src" / "deep")
    assert done.returncode == 0, done.stderr
    _ours(json.loads((repo / ".claude" / "settings.json").read_text()))
    assert "chitta" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert not (tmp_path / ".claude.json").exists() and not _settings(tmp_path).exists()
    plain = tmp_path / "plain"  # no git root: the current folder
    plain.mkdir()
    assert run("setup", "claude", "--project", cwd=plain).returncode == 0
    assert (plain / ".mcp.json").is_file() and (plain / ".claude" / "settings.json").is_file()


def test_home_and_store_are_carried_into_every_command(run, tmp_path: Path) -> None:
    done = run("--home", "data", "--store", "work", "setup", "claude")
    assert done.returncode == 0, done.stderr
    home = str(tmp_path / "data")  # made absolute
    for command in _ours(json.loads(_settings(tmp_path).read_text())).values():
        assert shlex.split(command)[1:5] == ["--home", home, "--store", "work"]
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["chitta"]
    assert server["args"] == ["--home", home, "--store", "work", "mcp"]
    # Set up again without them: the older entries are replaced, not doubled.
    assert run("setup", "claude").returncode == 0
    for command in _ours(json.loads(_settings(tmp_path).read_text())).values():
        assert "--home" not in command
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["chitta"]
    assert server["args"] == ["mcp"]


def test_a_database_store_is_written_without_its_password(run, tmp_path: Path) -> None:
    url = "postgresql://alice:s3cret@db.example.com:5432/team"
    done = run("--store", url, "setup", "claude")
    assert done.returncode == 0, done.stderr
    written = _settings(tmp_path).read_text() + (tmp_path / ".claude.json").read_text()
    assert "s3cret" not in written
    for command in _ours(json.loads(_settings(tmp_path).read_text())).values():
        assert shlex.split(command)[1:3] == [
            "--store",
            "postgresql://alice@db.example.com:5432/team",
        ]


def test_hooks_install_carries_home_and_store(run, tmp_path: Path) -> None:
    settings = tmp_path / "s.json"
    done = run("--home", str(tmp_path / "h"), "--store", "w", "hooks", "install",
               "--settings", str(settings))  # fmt: skip
    assert done.returncode == 0, done.stderr
    for command in _ours(json.loads(settings.read_text())).values():
        assert shlex.split(command)[1:5] == ["--home", str(tmp_path / "h"), "--store", "w"]


def test_a_folder_that_cannot_be_written_exits_4(run, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        target = Path("/proc/chitta-test/settings.json")  # root writes anywhere but /proc
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "sub" / "settings.json"
    done = run("setup", "claude", "--settings", str(target),
               "--mcp-config", str(tmp_path / "mcp.json"))  # fmt: skip
    assert done.returncode == 4 and "cannot read or write" in done.stderr


def test_the_merge_functions_are_pure_and_round_trip() -> None:
    settings = {"hooks": {"Stop": [{"matcher": "", "hooks": [THEIR_HOOK]}]}, "env": {"A": "1"}}
    merged, changed = merge_hooks(settings, "/old/chitta")
    assert set(changed.values()) == {"added"} and settings["hooks"]["Stop"][0]["hooks"] == [
        THEIR_HOOK
    ]
    moved, changed = merge_hooks(merged, "/new/chitta")
    assert set(changed.values()) == {"replaced"}
    assert all(c.startswith("/new/") for c in _ours(moved).values())
    assert remove_hooks(moved) == (settings, list(EVENTS))
    config = {"mcpServers": {"other": THEIR_SERVER}}
    entry = {"type": "stdio", "command": "/c", "args": ["mcp"], "env": {}}
    added, verb = merge_mcp(config, entry)
    assert verb == "added" and merge_mcp(added, entry) == (added, None)
    assert remove_mcp(added) == (config, True) and remove_mcp(config) == (config, False)


def test_hooks_of_other_tools_are_not_taken_for_chittas() -> None:
    assert is_chitta_hook("/a b/.venv/bin/chitta hook stop", "stop") is False  # unquoted space
    assert is_chitta_hook("'/a b/.venv/bin/chitta' --home /h hook stop", "stop")
    assert is_chitta_hook("/usr/bin/python3 -m chitta hook prompt", "prompt")
    assert not is_chitta_hook("my-tool hook prompt", "prompt")
    assert not is_chitta_hook("/bin/chitta hook stop --x", "stop")
    assert not is_chitta_hook("chitta 'unbalanced", "stop")


def test_json_says_what_changed_and_errors_are_json(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["HOME"] = str(tmp_path)

    def setup(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chitta", "setup", "claude", "--json",
                               *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                              timeout=60)  # fmt: skip

    first = json.loads(setup().stdout)
    assert first["ok"] and [f["written"] for f in first["files"]] == [True, True]
    again = json.loads(setup().stdout)
    assert [f["changed"] for f in again["files"]] == [False, False]
    (tmp_path / ".claude.json").write_text("{not json")
    bad = setup()
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"] == "bad_config"

"""`chitta hooks install`: merges into Claude Code's settings, idempotent, with a backup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from chitta.hooks.install import EVENTS


def install(settings: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return subprocess.run(
        [sys.executable, "-m", "chitta", "hooks", "install", "--settings", str(settings)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def _commands(data: dict, event: str) -> list[str]:
    return [h["command"] for g in data["hooks"][event] for h in g["hooks"]]


def test_install_merges_keeps_other_settings_and_backs_up(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    theirs = {"type": "command", "command": "notify-me"}
    mine = {"model": "opus", "hooks": {"Stop": [{"hooks": [theirs]}]}}
    settings.write_text(json.dumps(mine))
    done = install(settings)
    assert done.returncode == 0, done.stderr
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert _commands(data, "Stop")[0] == "notify-me"
    for event, name in EVENTS.items():
        (ours,) = [c for c in _commands(data, event) if c.endswith(f" hook {name}")]
        assert Path(ours.split(" hook ")[0].split(" -m ")[0]).is_absolute()
    (backup,) = tmp_path.glob("settings.json.bak-*")
    assert json.loads(backup.read_text()) == mine


def test_install_twice_changes_nothing(tmp_path: Path) -> None:
    settings = tmp_path / "claude" / "settings.json"  # a missing file and folder are created
    assert install(settings).returncode == 0
    first = settings.read_text()
    again = install(settings)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert settings.read_text() == first
    assert not list(settings.parent.glob("settings.json.bak-*"))  # nothing was replaced


def test_install_refuses_a_file_that_is_not_json(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus",')
    done = install(settings)
    assert done.returncode == 2
    assert "not valid JSON" in done.stderr and "nothing changed" in done.stderr
    assert settings.read_text() == '{"model": "opus",'
    assert list(tmp_path.iterdir()) == [settings]


def test_install_keeps_an_owner_only_file_owner_only_and_a_symlink_a_symlink(
    tmp_path: Path,
) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"env": {"API_KEY": "secret"}}))
    real.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    done = install(link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == real
    assert real.stat().st_mode & 0o777 == 0o600
    assert "hooks" in json.loads(real.read_text())


def test_install_answers_json(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env["HOME"] = str(tmp_path)

    def install() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chitta", "hooks", "install", "--json"],
                              capture_output=True, text=True, env=env, timeout=60)  # fmt: skip

    first = json.loads(install().stdout)
    events = {"UserPromptSubmit", "SessionStart", "Stop", "PostToolUse"}
    assert first["ok"] and set(first["changed"]) == events
    assert json.loads(install().stdout)["changed"] == {}
    (tmp_path / ".claude" / "settings.json").write_text("{bad")
    bad = install()
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"] == "bad_config"

"""Starting the daemon on demand (daemon/launch.py), with real `chitta serve` processes."""

from __future__ import annotations

import os
import signal
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from chitta.config import load_settings
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.daemon.launch import ensure_daemon, log_path, spawn_daemon, wait_for_daemon
from chitta.errors import DaemonUnavailable


def settings_for(home: Path, **changes):
    return replace(load_settings({"CHITTA_HOME": str(home)}), **changes)


def test_ensure_daemon_starts_one_and_reuses_it(home: Path, launch) -> None:
    settings = settings_for(home)
    # CHITTA_HOME reaches the detached daemon through --home, not the environment.
    path = ensure_daemon(settings)
    try:
        with DaemonClient(path) as client:
            pid = client.call("memory_status")["daemon"]["pid"]
        assert ensure_daemon(settings) == path  # already answering: nothing new started
        with DaemonClient(path) as client:
            assert client.call("memory_status")["daemon"]["pid"] == pid
        assert stat.S_IMODE(log_path(settings).stat().st_mode) == 0o600
    finally:
        os.kill(pid, signal.SIGTERM)


def test_a_loser_waits_for_the_winner(home: Path, launch) -> None:
    launch(home)  # the winner, already serving
    settings = settings_for(home)
    proc, offset = spawn_daemon(settings)  # exits: already running
    wait_for_daemon(settings, proc, offset)
    assert proc.wait() != 0
    assert daemon_answers(settings.socket_path)


def test_a_daemon_that_cannot_start_is_reported(home: Path, tmp_path: Path) -> None:
    too_long = tmp_path / ("s" * 120) / "c.sock"
    settings = settings_for(home, socket=too_long)
    proc, offset = spawn_daemon(settings)
    with pytest.raises(DaemonUnavailable, match="exited with code 4: .*longer than"):
        wait_for_daemon(settings, proc, offset)


def test_a_daemon_started_on_demand_has_the_idle_exit_of_the_settings(home: Path) -> None:
    settings = load_settings({"CHITTA_HOME": str(home), "CHITTA_DAEMON_IDLE_S": "2"})
    assert settings.daemon_idle_s == 2
    proc, offset = spawn_daemon(settings)
    assert proc.args[-3:] == ["serve", "--idle-exit", "2"]
    wait_for_daemon(settings, proc, offset)
    with DaemonClient(settings.socket_path) as client:
        assert client.call("memory_status")["daemon"]["idle_exit_s"] == 2
    assert proc.wait(timeout=30) == 0  # it went away by itself
    assert not settings.socket_path.exists()
    assert "stopped after 2 s without a request" in log_path(settings).read_text()


def test_the_default_idle_exit_is_half_an_hour(home: Path) -> None:
    settings = settings_for(home)
    proc, offset = spawn_daemon(settings)
    try:
        assert proc.args[-3:] == ["serve", "--idle-exit", "1800"]
        wait_for_daemon(settings, proc, offset)
        with DaemonClient(settings.socket_path) as client:
            assert client.call("memory_status")["daemon"]["idle_exit_s"] == 1800
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_log_is_owner_only_in_folders_made_owner_only(tmp_path: Path, umask0) -> None:
    home = tmp_path / "new" / "nested" / "home"
    settings = settings_for(home, socket=tmp_path / ("s" * 120) / "c.sock")  # exits at once
    proc, _ = spawn_daemon(settings)
    proc.wait(timeout=60)
    for folder in (home, home.parent, home.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    log = log_path(settings)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    log.chmod(0o666)  # an older log with looser bits
    proc, _ = spawn_daemon(settings)
    proc.wait(timeout=60)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_database_url_goes_to_the_daemon_in_its_environment(tmp_path: Path) -> None:
    """The password of a database store stays out of the command line `ps` shows."""
    from chitta.daemon.launch import _command, _environment

    url = "postgresql://ann:s3cret@db.example/chitta"
    settings = load_settings({"CHITTA_HOME": str(tmp_path), "CHITTA_STORE": url})
    assert not any("s3cret" in part for part in _command(settings))
    assert _environment(settings)["CHITTA_STORE"] == url
    named = replace(settings, store="work")
    assert _command(named)[-5:-3] == ["--store", "work"]


def test_a_daemon_started_for_settings_without_distillation_does_not_distill(
    tmp_path: Path,
) -> None:
    from chitta.daemon.launch import _environment

    settings = load_settings({"CHITTA_HOME": str(tmp_path), "CHITTA_DISTILL": "0"})
    assert settings.distill is False
    assert _environment(settings)["CHITTA_DISTILL"] == "0"
    assert "CHITTA_DISTILL" not in _environment(replace(settings, distill=True))

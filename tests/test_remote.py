"""What is particular to the Python API through the daemon: how Chitta.open chooses, what it
refuses, and what only a store opened in process offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.config import Settings
from chitta.errors import ChittaError, DaemonUnavailable, InProcessOnly, StoreLocked
from chitta.remote import DaemonChitta

WAL = "We chose SQLite WAL over a custom log because crash recovery comes free"


def test_open_talks_to_the_daemon_when_one_answers(settings: Settings, embedder, launch) -> None:
    with Chitta.open(settings, embedder=embedder) as c:
        assert isinstance(c, Chitta)
        mid = c.remember(WAL, realm="demo").id
    launch(settings.home)
    with Chitta.open(settings) as c:
        assert isinstance(c, DaemonChitta)
        assert c.get(mid).content == WAL and c.home == settings.home
        assert c.recall("write-ahead log", realm="demo").hits[0].memory.id == mid


def test_through_the_daemon_without_one_is_refused(settings: Settings) -> None:
    with pytest.raises(DaemonUnavailable, match="no chitta daemon answers"):
        Chitta.open(settings, through_daemon=True)
    assert not settings.store_path.exists()  # nothing was opened or made


def test_in_process_while_a_daemon_holds_the_store_is_refused(
    settings: Settings, embedder, launch
) -> None:
    launch(settings.home)
    with pytest.raises(StoreLocked):
        Chitta.open(settings, embedder=embedder, through_daemon=False)


def test_what_lives_in_the_daemon_is_refused_with_a_reason(settings: Settings, launch) -> None:
    launch(settings.home)
    with Chitta.open(settings) as c:
        for name in ("store", "embedder", "clock", "sessions"):
            with pytest.raises(InProcessOnly, match=f"{name} .* lives in the daemon's process"):
                getattr(c, name)
        with pytest.raises(AttributeError):
            c.no_such_thing  # noqa: B018
        with pytest.raises(InProcessOnly):
            c.decay(now=0)
        assert isinstance(InProcessOnly("x"), ChittaError)
        assert not hasattr(c, "store")  # duck typing still tells the two apart


def test_open_without_settings_uses_the_environments(
    tmp_path: Path, embedder, launch, monkeypatch
) -> None:
    home = tmp_path / "env-home"
    monkeypatch.setenv("CHITTA_HOME", str(home))
    monkeypatch.setenv("CHITTA_REALM", "envrealm")
    with Chitta.open(embedder=embedder) as c:
        assert isinstance(c, Chitta) and c.home == home and c.realm == "envrealm"
        mid = c.remember(WAL).id
    launch(home)
    with Chitta.open() as c:
        assert isinstance(c, DaemonChitta) and c.home == home
        # The realm rule is this process's: a call that names none is about envrealm.
        assert c.realm == "envrealm" and c.get(mid).realm == "envrealm"
        assert c.recall("write-ahead log").hits[0].memory.id == mid


def test_relative_paths_are_sent_absolute(
    settings: Settings, launch, tmp_path, monkeypatch
) -> None:
    launch(settings.home)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with Chitta.open(settings) as c:
        c.remember(WAL)
        c.backup(Path("copy.db"))
        assert (work / "copy.db").is_file()
        assert c.restore_backup(Path("copy.db")).is_absolute()

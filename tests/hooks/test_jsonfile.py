"""A client's settings file replaced safely: backed up owner-only (it may hold secrets), the
new file owner-only unless the old one had its own mode, folders chitta makes 0700."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from chitta.hooks.jsonfile import write_object


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_and_its_folders_are_owner_only(tmp_path: Path, umask0) -> None:
    path = tmp_path / "home" / ".claude" / "settings.json"
    leftover = path.parent / f".{path.name}.chitta-tmp"  # from a run that was killed
    path.parent.mkdir(parents=True)
    leftover.write_text("{")
    leftover.chmod(0o666)
    assert write_object(path, {"env": {"TOKEN": "secret"}}) is None
    assert json.loads(path.read_text()) == {"env": {"TOKEN": "secret"}}
    assert _mode(path) == 0o600 and not leftover.exists()
    fresh = tmp_path / "made" / "by" / "chitta" / "x.json"
    write_object(fresh, {})
    assert [_mode(p) for p in (fresh, fresh.parent, fresh.parent.parent)] == [0o600, 0o700, 0o700]


def test_the_backup_is_owner_only_and_the_file_keeps_its_mode(tmp_path: Path, umask0) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"env": {"TOKEN": "secret"}}))
    path.chmod(0o644)
    backup = write_object(path, {"env": {"TOKEN": "secret"}, "hooks": {}})
    assert backup is not None and json.loads(backup.read_text()) == {"env": {"TOKEN": "secret"}}
    assert _mode(backup) == 0o600  # a copy of the user's secrets: for the user alone
    assert _mode(path) == 0o644  # the user's own file: the mode they gave it

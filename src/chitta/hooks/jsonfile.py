"""Reading and replacing a client's JSON settings file, safely.

A file that is not a JSON object is refused before anything is written. A replaced file is
first copied to ``<name>.bak-<time>``; the new content goes to a temporary file beside it
that is renamed over, so a crash leaves the old file or the new one, never half of either.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from chitta import files
from chitta.errors import BadConfig


def read_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (``{}`` when the file is missing or empty)."""
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadConfig(f"{path} is not UTF-8 text ({exc.reason}); nothing changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadConfig(f"{path} is not valid JSON ({exc}); nothing changed") from None
    if not isinstance(data, dict):
        raise BadConfig(f"{path} does not hold a JSON object; nothing changed")
    return data


def object_at(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``data[key]`` as a JSON object (created when missing), or :class:`BadConfig`."""
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise BadConfig(f"the {where}'s '{key}' is not a JSON object; nothing changed")
    return value


def backup_path(path: Path) -> Path:
    """A free ``<name>.bak-<time>`` beside ``path``."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while backup.exists():  # two runs in one second keep both backups
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
        n += 1
    return backup


def write_object(path: Path, data: dict[str, Any]) -> Path | None:
    """Replace ``path`` with ``data`` (see the module docstring); the backup made, if any."""
    files.private_dir(path.parent)
    backup = None
    if path.exists():
        backup = backup_path(path)
        # The copy is owner-only whatever the file's mode: settings can hold secrets (env).
        with path.open("rb") as src, os.fdopen(files.open_private(backup), "wb") as dst:
            shutil.copyfileobj(src, dst)
        shutil.copystat(path, backup)  # its times, as copy2 kept them ...
        os.chmod(backup, files.FILE_MODE)  # ... but not its bits
    tmp = path.with_name(f".{path.name}.chitta-tmp")
    # Owner-only while written, then the old file's mode (the user's own choice for it).
    fd = files.open_private(tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return backup

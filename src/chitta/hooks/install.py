"""``chitta hooks install``: merge chitta's hooks into Claude Code's settings JSON.

Idempotent: an event that already runs the same command is left alone, so a second run
changes nothing (and writes nothing). The user's other settings and hooks are kept; an
existing file is copied to ``<name>.bak-<time>`` before it is replaced, and the new content
is written to a temporary file and renamed over, so a crash leaves the old or the new file.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.errors import BadConfig

#: Claude Code's event -> the chitta hook that serves it.
EVENTS = {"UserPromptSubmit": "prompt", "SessionStart": "session-start", "Stop": "stop"}
#: Claude Code's per-hook timeout, in seconds: above the default budget, so the budget
#: (which drops late lanes) is what bounds the hook, not Claude Code killing it.
TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class Installed:
    """What an install did: the events it added, and the backup it made (if any)."""

    path: Path
    added: tuple[str, ...]
    backup: Path | None


def default_settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def chitta_executable() -> str:
    """The absolute path of the running ``chitta`` (else ``python -m chitta``)."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "chitta" and argv0.exists():
        return shlex.quote(str(argv0.resolve()))
    found = shutil.which("chitta")
    if found:
        return shlex.quote(str(Path(found).resolve()))
    return f"{shlex.quote(sys.executable)} -m chitta"


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise BadConfig(f"{path} is not valid JSON ({exc}); nothing changed") from None
    if not isinstance(data, dict):
        raise BadConfig(f"{path} does not hold a JSON object; nothing changed")
    return data


def _runs(groups: list[Any], command: str) -> bool:
    return any(
        isinstance(h, dict) and h.get("command") == command
        for g in groups if isinstance(g, dict)
        for h in (g.get("hooks") or [])
    )  # fmt: skip


def merge_hooks(settings: dict[str, Any], executable: str) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with chitta's hooks merged in, and the events that were added."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise BadConfig("the settings' 'hooks' is not a JSON object; nothing changed")
    added = []
    for event, name in EVENTS.items():
        command = f"{executable} hook {name}"
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise BadConfig(f"the settings' hooks.{event} is not a list; nothing changed")
        if not _runs(groups, command):
            groups.append({"hooks": [{"type": "command", "command": command,
                                      "timeout": TIMEOUT_S}]})  # fmt: skip
            added.append(event)
    return settings, added


def install(path: Path, executable: str | None = None) -> Installed:
    """Merge chitta's hooks into the settings file at ``path`` (see the module docstring)."""
    path = path.resolve()  # a settings file that is a symlink (dotfiles) is updated where it is
    settings, added = merge_hooks(_read(path), executable or chitta_executable())
    if not added:
        return Installed(path, (), None)
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():  # two installs in one second keep both backups
            backup = backup.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
            n += 1
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.chitta-tmp")
    # Owner-only while written, then the old file's mode: settings can hold secrets (env).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)
    return Installed(path, tuple(added), backup)

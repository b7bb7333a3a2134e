"""``chitta hooks install``: merge chitta's hooks into Claude Code's settings JSON.

Idempotent: an event that already runs the same command is left alone, so a second run
changes nothing (and writes nothing). An older chitta hook of the same event (another path,
other ``--home``/``--store``) is replaced, not doubled. The user's other settings and hooks
are kept; the file is backed up and replaced atomically (:mod:`chitta.hooks.jsonfile`).
"""

from __future__ import annotations

import copy
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.errors import BadConfig
from chitta.hooks.jsonfile import object_at, read_object, write_object
from chitta.store.backends import without_password

#: Claude Code's event -> the chitta hook that serves it.
EVENTS = {
    "UserPromptSubmit": "prompt",
    "SessionStart": "session-start",
    "Stop": "stop",
    "PostToolUse": "post-edit",
}
#: The events whose hooks run for some tools only: the tools, as Claude Code's ``matcher``
#: (the post-edit hook follows the tools that change a file; hooks/post_edit.py).
MATCHERS = {"PostToolUse": "Edit|Write|MultiEdit"}
#: Claude Code's per-hook timeout, in seconds: above the default budget, so the budget
#: (which drops late lanes) is what bounds the hook, not Claude Code killing it.
TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class Installed:
    """What an install did: the events it added or replaced, and the backup it made (if any)."""

    path: Path
    changed: dict[str, str]
    backup: Path | None


def default_settings_path() -> Path:
    return Path.home() / ".claude" / "settings.json"


def chitta_argv() -> list[str]:
    """This install's ``chitta`` as an absolute command (else ``python -m chitta``).

    The venv's ``bin/chitta`` beside the running interpreter comes first: it is this
    install's even when the command was started as ``python -m chitta`` or through a symlink.
    """
    beside = Path(sys.executable).parent / "chitta"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    argv0 = Path(sys.argv[0])
    if argv0.name == "chitta" and argv0.exists():
        return [str(argv0.resolve())]
    found = shutil.which("chitta")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "chitta"]


def chitta_executable() -> str:
    """:func:`chitta_argv` as one shell word (or three)."""
    return shlex.join(chitta_argv())


def global_args(home: Path | None, store: str | None) -> list[str]:
    """The ``--home``/``--store`` a written command must carry (the home made absolute; a
    database URL without its password, which stays in ``~/.pgpass`` or ``PGPASSWORD`` rather
    than in a settings file)."""
    args = []
    if home is not None:
        args += ["--home", os.path.abspath(os.path.expanduser(home))]
    if store is not None:
        args += ["--store", without_password(store)]
    return args


def is_chitta_hook(command: object, name: str) -> bool:
    """Whether ``command`` runs ``chitta … hook NAME`` (any path, any global options)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 3 or words[-2:] != ["hook", name]:
        return False
    head = words[:-2]
    return Path(head[0]).name == "chitta" or head[1:3] == ["-m", "chitta"]


def _drop(groups: list[Any], name: str, keep: str | None) -> int:
    """Remove chitta's ``hook NAME`` entries other than ``keep`` from ``groups``, in place;
    a group left empty by that goes too. How many entries went."""
    dropped = 0
    for group in list(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = [
            h for h in group["hooks"]
            if not (isinstance(h, dict) and is_chitta_hook(h.get("command"), name)
                    and h.get("command") != keep)
        ]  # fmt: skip
        dropped += len(group["hooks"]) - len(kept)
        if len(kept) != len(group["hooks"]):
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
    return dropped


def _runs(groups: list[Any], command: str) -> bool:
    return any(
        isinstance(h, dict) and h.get("command") == command
        for g in groups if isinstance(g, dict)
        for h in (g.get("hooks") or [])
    )  # fmt: skip


def _groups(hooks: dict[str, Any], event: str) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise BadConfig(f"the settings' hooks.{event} is not a list; nothing changed")
    return groups


def merge_hooks(settings: dict[str, Any], executable: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A copy of ``settings`` with chitta's hooks run by ``executable`` (a shell prefix, e.g.
    ``/abs/chitta --home /abs/h``), and each changed event -> ``added`` or ``replaced``."""
    settings = copy.deepcopy(settings)
    hooks = object_at(settings, "hooks", "settings")
    changed = {}
    for event, name in EVENTS.items():
        command = f"{executable} hook {name}"
        groups = _groups(hooks, event)
        replaced = _drop(groups, name, keep=command)
        if not _runs(groups, command):
            entry = {"type": "command", "command": command, "timeout": TIMEOUT_S}
            matcher = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
            groups.append({**matcher, "hooks": [entry]})
            changed[event] = "replaced" if replaced else "added"
        elif replaced:
            changed[event] = "replaced"
    return settings, changed


def remove_hooks(settings: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``settings`` without chitta's hooks, and the events they were removed from.

    An event list (and a ``hooks`` object) emptied by the removal goes too; everything else
    stays as it was."""
    settings = copy.deepcopy(settings)
    if "hooks" not in settings:
        return settings, []
    hooks = object_at(settings, "hooks", "settings")
    removed = []
    for event, name in EVENTS.items():
        if event not in hooks:
            continue
        groups = _groups(hooks, event)
        if _drop(groups, name, keep=None):
            removed.append(event)
            if not groups:
                del hooks[event]
    if removed and not hooks:
        del settings["hooks"]
    return settings, removed


def install(path: Path, executable: str | None = None) -> Installed:
    """Merge chitta's hooks into the settings file at ``path`` (see the module docstring)."""
    path = path.resolve()  # a settings file that is a symlink (dotfiles) is updated where it is
    settings, changed = merge_hooks(read_object(path), executable or chitta_executable())
    if not changed:
        return Installed(path, {}, None)
    return Installed(path, changed, write_object(path, settings))

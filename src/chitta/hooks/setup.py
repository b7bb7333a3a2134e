"""``chitta setup claude``: chitta's hooks and its MCP server registered with Claude Code.

Two files change: the settings file (the hooks, :mod:`chitta.hooks.install`) and the MCP
file (the ``chitta`` entry of ``mcpServers``). User scope writes ``~/.claude/settings.json``
and ``~/.claude.json``; project scope ``.claude/settings.json`` and ``.mcp.json`` at the git
root. Both files are read and checked before either is written, so a bad one leaves both as
they were. Every written command is this install's absolute ``chitta`` with the
``--home``/``--store`` the user gave.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta import files
from chitta.hooks.install import merge_hooks, remove_hooks
from chitta.hooks.jsonfile import object_at, read_object, write_object
from chitta.scope import git_root

#: The key of chitta's entry under ``mcpServers``.
SERVER = "chitta"


@dataclass(frozen=True, slots=True)
class Targets:
    """The two files a setup writes."""

    settings: Path
    mcp: Path


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's planned change: what it says, and the new content (``None``: unchanged)."""

    path: Path
    summary: str
    content: dict[str, Any] | None


def targets(*, project: bool, cwd: Path, user_home: Path) -> Targets:
    """User scope (under ``user_home``) or project scope (the git root of ``cwd``, else
    ``cwd``)."""
    if project:
        root = git_root(cwd) or cwd
        return Targets(root / ".claude" / "settings.json", root / ".mcp.json")
    return Targets(user_home / ".claude" / "settings.json", user_home / ".claude.json")


def mcp_entry(argv: Sequence[str]) -> dict[str, Any]:
    """Claude Code's stdio server entry that runs ``argv`` + ``mcp``."""
    return {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": {}}


def merge_mcp(config: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A copy of ``config`` with ``entry`` as ``mcpServers.chitta``, and ``added``,
    ``replaced`` or ``None`` (already there)."""
    config = copy.deepcopy(config)
    servers = object_at(config, "mcpServers", "MCP file")
    old = servers.get(SERVER)
    if isinstance(old, dict) and isinstance(old.get("env"), dict):
        entry = {**entry, "env": old["env"]}  # variables the user added to chitta's entry stay
    if old == entry:
        return config, None
    servers[SERVER] = entry
    return config, "added" if old is None else "replaced"


def remove_mcp(config: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A copy of ``config`` without ``mcpServers.chitta`` (an emptied ``mcpServers`` goes
    too), and whether it was there."""
    config = copy.deepcopy(config)
    if "mcpServers" not in config:
        return config, False
    servers = object_at(config, "mcpServers", "MCP file")
    if SERVER not in servers:
        return config, False
    del servers[SERVER]
    if not servers:
        del config["mcpServers"]
    return config, True


def _hooks_change(path: Path, argv: Sequence[str], uninstall: bool) -> FileChange:
    current = read_object(path)
    if uninstall:
        new, removed = remove_hooks(current)
        if not removed:
            return FileChange(path, "no chitta hooks; nothing changed", None)
        return FileChange(path, f"removed chitta's hooks of {', '.join(removed)}", new)
    new, changed = merge_hooks(current, shlex.join(argv))
    if not changed:
        return FileChange(path, "chitta's hooks are already set up; nothing changed", None)
    done = ", ".join(f"{verb} {event}" for event, verb in changed.items())
    return FileChange(path, f"hooks: {done} ({shlex.join(argv)} hook …)", new)


def _mcp_change(path: Path, argv: Sequence[str], uninstall: bool) -> FileChange:
    current = read_object(path)
    if uninstall:
        new, removed = remove_mcp(current)
        if not removed:
            return FileChange(path, f"no MCP server '{SERVER}'; nothing changed", None)
        return FileChange(path, f"removed the MCP server '{SERVER}'", new)
    new, verb = merge_mcp(current, mcp_entry(argv))
    if verb is None:
        return FileChange(path, f"the MCP server '{SERVER}' is already set up; nothing changed",
                          None)  # fmt: skip
    return FileChange(path, f"{verb} the MCP server '{SERVER}' ({shlex.join([*argv, 'mcp'])})", new)


def plan(where: Targets, argv: Sequence[str], *, uninstall: bool = False) -> list[FileChange]:
    """What a setup (or ``uninstall``) would change in both files; raises
    :class:`~chitta.errors.BadConfig` for a file it must not touch, before anything is
    written. ``argv`` is the chitta command with its global options."""
    # A file that is a symlink (dotfiles) is updated where it points.
    return [
        _hooks_change(where.settings.resolve(), argv, uninstall),
        _mcp_change(where.mcp.resolve(), argv, uninstall),
    ]


def apply(changes: Sequence[FileChange]) -> list[Path | None]:
    """Write each changed file (backed up, atomically); the backups made, one per change."""
    for change in changes:  # a folder that cannot be made fails before any file is written
        if change.content is not None:
            files.private_dir(change.path.parent)  # 0700 where chitta makes it
    return [
        write_object(change.path, change.content) if change.content is not None else None
        for change in changes
    ]

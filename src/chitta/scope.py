"""The realm rule: which realm (project) a call is about when it names none.

One rule for the hooks, the MCP tools, the CLI and the Python API: an explicit argument, else
``CHITTA_REALM``, else the name of the git root above the working directory, else
``default``. The realm a memory lands in and the realm recall reads then agree, whichever
entry point an agent uses. Standard library only: the hooks import it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_REALM = "default"
#: The rules, in the order they are tried.
ARGUMENT, VARIABLE, GIT_ROOT, DEFAULT = "argument", "CHITTA_REALM", "git root", "default"
_NOT_IN_REALM = re.compile(r"[^\w.:/@+-]+")


@dataclass(frozen=True, slots=True)
class RealmChoice:
    """A realm and the rule that chose it (``where``: the git root's path, for that rule)."""

    name: str = DEFAULT_REALM
    rule: str = DEFAULT
    where: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "rule": self.rule, "where": self.where}

    def describe(self) -> str:
        """E.g. ``realm chitta (the git root /work/chitta)``."""
        if self.rule == GIT_ROOT:
            return f"realm {self.name} (the name of the git root {self.where})"
        if self.rule == VARIABLE:
            return f"realm {self.name} (from CHITTA_REALM)"
        if self.rule == ARGUMENT:
            return f"realm {self.name} (named by the caller)"
        return f"realm {self.name} (the default: no CHITTA_REALM, no git root)"


def git_root(cwd: Path) -> Path | None:
    """The nearest folder at or above ``cwd`` holding ``.git`` (a folder or a worktree's file)."""
    for folder in (cwd, *cwd.parents):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:
            return None  # an unreadable folder on the way up: no root can be told
    return None


def realm_name(raw: str) -> str:
    """``raw`` made a valid realm name: characters a realm may not hold become ``-``."""
    cleaned = _NOT_IN_REALM.sub("-", raw).lstrip(".:/@+-")[:128]
    return cleaned or DEFAULT_REALM


def resolve_realm(
    explicit: str | None, environ: Mapping[str, str], cwd: Path | None
) -> RealmChoice:
    """The realm of a call: ``explicit``, else ``CHITTA_REALM`` (or the older
    ``CHITTA_HOOK_REALM`` / ``CC_SOUL_REALM``), else the git root's name above ``cwd``, else
    ``default``."""
    if explicit:
        return RealmChoice(explicit, ARGUMENT)
    for name in ("CHITTA_REALM", "CC_SOUL_REALM", "CHITTA_HOOK_REALM", "CC_SOUL_HOOK_REALM"):
        value = environ.get(name)
        if value:
            return RealmChoice(value, VARIABLE)
    root = git_root(cwd) if cwd is not None else None
    if root is not None:
        return RealmChoice(realm_name(root.name), GIT_ROOT, str(root))
    return RealmChoice()

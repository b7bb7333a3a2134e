"""The hooks' settings (CHITTA_HOOK_*) and the realm rule, read once per hook run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chitta.config import DEFAULT_REALM, PREFIX, _env
from chitta.errors import BadArgument

#: The whole hook's wall-clock budget when CHITTA_HOOK_BUDGET_MS is not set (seed 000).
DEFAULT_BUDGET_MS = 6000
_NOT_IN_REALM = re.compile(r"[^\w.:/@+-]+")


@dataclass(frozen=True, slots=True)
class HookSettings:
    """What a hook run needs beyond the store settings."""

    budget_ms: int = DEFAULT_BUDGET_MS  # CHITTA_HOOK_BUDGET_MS
    realm: str | None = None  # CHITTA_HOOK_REALM: overrides the realm of the working directory
    clip_chars: int = 200  # memory text per context line


def load_hook_settings(environ: Mapping[str, str]) -> HookSettings:
    """Read CHITTA_HOOK_BUDGET_MS and CHITTA_HOOK_REALM from ``environ``."""
    raw = _env(environ, "HOOK_BUDGET_MS")
    budget = DEFAULT_BUDGET_MS
    if raw is not None:
        try:
            budget = int(raw)
        except ValueError:
            raise BadArgument(f"{PREFIX}HOOK_BUDGET_MS must be an integer, got {raw!r}") from None
        if budget <= 0:
            raise BadArgument(f"{PREFIX}HOOK_BUDGET_MS must be positive, got {budget}")
    return HookSettings(budget_ms=budget, realm=_env(environ, "HOOK_REALM"))


def git_root(cwd: Path) -> Path | None:
    """The nearest folder at or above ``cwd`` holding ``.git`` (a folder or a file), if any."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return None


def realm_for(cwd: Path, override: str | None = None) -> str:
    """The realm of a working directory: the override, else the name of the git root above
    ``cwd`` (a ``.git`` folder or file), else the name of ``cwd`` itself; made a valid realm
    name (characters a realm may not hold become ``-``)."""
    if override:
        return override
    name = (git_root(cwd) or cwd).name
    cleaned = _NOT_IN_REALM.sub("-", name).lstrip(".:/@+-")[:128]
    return cleaned or DEFAULT_REALM

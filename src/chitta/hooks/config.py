"""The hooks' settings (CHITTA_HOOK_*) and their realm, read once per hook run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chitta.config import PREFIX, _env
from chitta.errors import BadArgument
from chitta.scope import resolve_realm

#: The whole hook's wall-clock budget when CHITTA_HOOK_BUDGET_MS is not set (seed 000).
DEFAULT_BUDGET_MS = 6000


@dataclass(frozen=True, slots=True)
class HookSettings:
    """What a hook run needs beyond the store settings."""

    budget_ms: int = DEFAULT_BUDGET_MS  # CHITTA_HOOK_BUDGET_MS
    clip_chars: int = 200  # memory text per context line


def load_hook_settings(environ: Mapping[str, str]) -> HookSettings:
    """Read CHITTA_HOOK_BUDGET_MS from ``environ``."""
    raw = _env(environ, "HOOK_BUDGET_MS")
    budget = DEFAULT_BUDGET_MS
    if raw is not None:
        try:
            budget = int(raw)
        except ValueError:
            raise BadArgument(f"{PREFIX}HOOK_BUDGET_MS must be an integer, got {raw!r}") from None
        if budget <= 0:
            raise BadArgument(f"{PREFIX}HOOK_BUDGET_MS must be positive, got {budget}")
    return HookSettings(budget_ms=budget)


def realm_for(cwd: Path, environ: Mapping[str, str]) -> str:
    """The realm of a hook run in ``cwd``: the realm rule (chitta/scope.py) — CHITTA_REALM
    (or the older CHITTA_HOOK_REALM), else the git root's name, else ``default``."""
    return resolve_realm(None, environ, cwd).name

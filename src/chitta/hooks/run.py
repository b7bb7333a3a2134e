"""The frame every hook runs in: read the event, settle settings, realm and deadline, run the
hook, print its context, and never fail: any error becomes one short line and exit code 0.

Exit code 0 matters: for UserPromptSubmit, Claude Code reads exit code 2 as "block this
prompt", and other codes as a hook failure; a memory system must never cost the user a prompt.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chitta.config import load_settings
from chitta.daemon.client import daemon_answers
from chitta.errors import ChittaError, InputError
from chitta.hooks.config import HookSettings, load_hook_settings, realm_for
from chitta.hooks.render import TAG, clip
from chitta.recall.gate import GateSettings

log = logging.getLogger(__name__)

#: The most hook input read from stdin (Claude Code's events are small; a prompt is text).
MAX_INPUT_BYTES = 4 << 20


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook run: its event, where the daemon is, the realm, and the clock."""

    event: Mapping[str, Any]
    socket: Path
    realm: str
    session: str | None
    hook: HookSettings
    started: float  # time.monotonic() at the start of the hook
    gate: GateSettings = GateSettings()  # noqa: RUF009 - frozen
    admit_debug: bool = False  # CHITTA_ADMIT_DEBUG: one line per row on stderr

    @property
    def deadline(self) -> float:
        return self.started + self.hook.budget_ms / 1000

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000


#: A hook returns what it prints on stdout: Claude Code's JSON output, or "" for nothing.
Hook = Callable[[HookRun], str]


def read_event(stream: Any) -> dict[str, Any]:
    """The hook's JSON object from ``stream``, or an :class:`InputError` saying what is wrong."""
    if stream is None or stream.isatty():
        raise InputError("no hook input on stdin (Claude Code sends a JSON object)")
    raw = stream.read(MAX_INPUT_BYTES)
    try:
        event = json.loads(raw) if raw.strip() else None
    except ValueError as exc:
        raise InputError(f"the hook input on stdin is not JSON ({exc})") from None
    if not isinstance(event, dict):
        raise InputError("the hook input on stdin is not a JSON object")
    return event


def _prepare(overrides: Mapping[str, Any], started: float) -> HookRun:
    settings = load_settings()
    settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    hook = load_hook_settings(os.environ)
    event = read_event(sys.stdin)
    cwd = event.get("cwd")
    realm = realm_for(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd(), os.environ)
    session = event.get("session_id")
    return HookRun(event=event, socket=settings.socket_path, realm=realm,
                   session=session if isinstance(session, str) and session else None,
                   hook=hook, started=started, gate=settings.gate,
                   admit_debug=settings.recall.admit_debug)  # fmt: skip


def run_hook(name: str, hook: Hook, overrides: Mapping[str, Any]) -> None:
    """Run ``hook`` and print its context; on any failure print one line. Always exits 0."""
    started = time.monotonic()
    try:
        run = _prepare(overrides, started)
        if not daemon_answers(run.socket):
            # The hook does not start a daemon: loading the model would take longer than the
            # budget; `chitta serve` (or the MCP server) keeps one running.
            text = f"{TAG} {name} hook: no chitta daemon on {run.socket} (start `chitta serve`)"
        else:
            text = hook(run)
    except ChittaError as exc:
        text = f"{TAG} {name} hook: {clip(str(exc), 300)}"
    except Exception as exc:  # noqa: BLE001 - the hook must never fail the user's turn
        log.debug("%s hook failed", name, exc_info=True)
        text = f"{TAG} {name} hook failed: {type(exc).__name__}: {clip(str(exc), 200)}"
    try:
        if text:  # a hook with nothing for the model prints nothing (no empty context)
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except (OSError, UnicodeError):
        pass  # nobody reads the output, or it cannot take the text; still exit 0
    # Abandoned lane threads are daemon threads: exit now without waiting for them.
    sys.exit(0)

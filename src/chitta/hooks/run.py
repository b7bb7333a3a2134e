"""The frame every hook runs in: read the event, settle settings, realm and deadline, start a
daemon when none answers, run the hook, print its context, and never fail: any error becomes
one short line on stderr and exit code 0.

Exit code 0 matters: for UserPromptSubmit, Claude Code reads exit code 2 as "block this
prompt", and other codes as a hook failure; a memory system must never cost the user a prompt.
Stdout is the model's context: only a hook's context goes there, never a diagnostic.
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

from chitta.config import Settings, load_settings
from chitta.daemon.client import daemon_answers
from chitta.errors import ChittaError, InputError, WriteFailed
from chitta.hooks.config import HookSettings, load_hook_settings, realm_for
from chitta.hooks.render import TAG, clip
from chitta.recall.confidence.gate import GateSettings

log = logging.getLogger(__name__)

#: The most hook input read from stdin (Claude Code's events are small; a prompt is text).
MAX_INPUT_BYTES = 4 << 20
#: The share of the budget a hook waits for a daemon it started (the rest is the hook's own).
START_WAIT_SHARE = 0.5
#: The SessionStart sources Claude Code sends.
SOURCES = ("startup", "resume", "clear", "compact")


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
    settings: Settings | None = None  # the store's settings (to start a daemon, to spool)

    @property
    def deadline(self) -> float:
        return self.started + self.hook.budget_ms / 1000

    @property
    def now_s(self) -> float:
        """The wall clock in seconds, moved by CHITTA_CLOCK_OFFSET_MS (ages are told by it)."""
        offset = self.settings.clock_offset_ms if self.settings is not None else 0
        return time.time() + offset / 1000

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000


#: A hook returns what it prints on stdout: Claude Code's JSON output, or "" for nothing.
Hook = Callable[[HookRun], str]


def note(name: str, text: str) -> None:
    """One diagnostic line on stderr (what the user may see; never the model's context)."""
    try:
        sys.stderr.write(f"{TAG} {name}: {clip(text, 300)}\n")
        sys.stderr.flush()
    except (OSError, UnicodeError):
        pass  # nobody reads it; still exit 0


def read_event(stream: Any) -> dict[str, Any]:
    """The hook's JSON object from ``stream``, or an :class:`InputError` saying what is wrong."""
    if stream is None or stream.isatty():
        raise InputError("no hook input on stdin (Claude Code sends a JSON object)")
    raw = stream.read(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise InputError(f"the hook input on stdin is over {MAX_INPUT_BYTES >> 20} MiB")
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
                   admit_debug=settings.recall.admit_debug, settings=settings)  # fmt: skip


def _check_event(name: str, run: HookRun) -> None:
    """Refuse an event this hook cannot serve truthfully (Claude Code always sends these).
    The Stop hook records a turn without a session rather than lose it; the post-edit hook
    needs none."""
    if run.session is None and name not in ("stop", "post-edit"):
        raise InputError("the hook input has no 'session_id'; nothing recalled")
    source = run.event.get("source")
    if name == "session-start" and source is not None and source not in SOURCES:
        raise InputError(f"unknown SessionStart source {clip(str(source), 40)!r}; nothing shown")


def daemon_within_budget(run: HookRun) -> bool:
    """Whether a daemon answers, starting a detached one (as `chitta mcp` does) when none
    does and waiting for it within the budget's share. A daemon still loading its model
    then goes on starting after the hook returns, and stops by itself after
    CHITTA_DAEMON_IDLE_S without a request."""
    if daemon_answers(run.socket):
        return True
    if run.settings is None:
        return False
    from chitta.daemon.launch import spawn_daemon

    spawn_daemon(run.settings)
    until = run.started + run.hook.budget_ms / 1000 * START_WAIT_SHARE
    while time.monotonic() < until:
        if daemon_answers(run.socket):
            return True
        time.sleep(0.05)
    return False


def run_hook(
    name: str, hook: Hook, overrides: Mapping[str, Any], *, needs_daemon: bool = True
) -> None:
    """Run ``hook`` and print its context on stdout; a diagnostic is one line on stderr.
    Always exits 0. A hook that ``needs_daemon`` is skipped (silently on stdout) when no
    daemon answers within the budget; one that does not (stop) sees to the daemon itself,
    after reading its input (daemon_within_budget)."""
    started = time.monotonic()
    text = ""
    try:
        run = _prepare(overrides, started)
        _check_event(name, run)
        if not needs_daemon or daemon_within_budget(run):
            text = hook(run)
        else:
            note(name, f"no chitta daemon answered on {run.socket}; one is starting "
                       "(memories from the next prompt on)")  # fmt: skip
    except ChittaError as exc:
        note(name, str(exc))
    except Exception as exc:  # noqa: BLE001 - the hook must never fail the user's turn
        log.debug("%s hook failed", name, exc_info=True)
        note(name, f"failed: {type(exc).__name__}: {clip(str(exc), 200)}")
    if text:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except (OSError, UnicodeError, WriteFailed):  # (WriteFailed: the CLI's guarded stdout)
            pass  # nobody reads the output, or it cannot take the text; still exit 0
    # Abandoned lane threads are daemon threads: exit now without waiting for them.
    sys.exit(0)

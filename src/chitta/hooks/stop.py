"""``chitta hook stop`` (Stop): record the turn that just ended as an episode memory.

The episode goes through the daemon's ``remember`` when a daemon answers within the budget
(one is started when none runs); otherwise it goes to the spool (chitta/spool.py), which the
daemon takes in when it starts. Either way it is never lost, and the hook stays within
CHITTA_HOOK_BUDGET_MS. What the hook did is one line on stderr: a Stop hook's stdout is not
context for the model.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from chitta import spool
from chitta.config import MAX_CONTENT_CHARS, MIN_CONTENT_CHARS
from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.errors import DaemonUnavailable, InputError
from chitta.hooks.render import clip
from chitta.hooks.run import HookRun, daemon_within_budget, note
from chitta.hooks.transcript import Turn, last_turn

#: Share of the memory's size limit each side of the turn may take.
_HALF = MAX_CONTENT_CHARS // 2 - 64
#: What the hook keeps of its budget to write the spool if the daemon does not answer.
SPOOL_RESERVE_S = 0.15


def episode_text(turn: Turn) -> str:
    """The episode's content: the user's prompt and the assistant's reply, each bounded."""
    return f"user: {turn.prompt[:_HALF]}\nassistant: {turn.reply[:_HALF]}".strip()


def _turn(run: HookRun) -> Turn | None:
    # Newer Claude Code versions pass the reply itself; the prompt is always in the transcript.
    path = run.event.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise InputError("the hook input has no 'transcript_path' (is this the Stop hook?)")
    try:
        turn = last_turn(Path(path))
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise InputError(f"no transcript at {path}; nothing recorded") from None
    except OSError as exc:
        raise InputError(f"cannot read the transcript {path}: {exc.strerror or exc}") from None
    reply = run.event.get("last_assistant_message")
    if turn is not None and isinstance(reply, str) and reply.strip():
        turn = Turn(prompt=turn.prompt, reply=reply.strip())
    return turn


def _deliver(run: HookRun, params: dict[str, Any]) -> tuple[str, str]:
    """Send ``remember`` to the daemon within the budget: ``("recorded", id)``, ``("spool",
    why)`` when it may not have arrived, or ``("refused", why)``."""
    if not daemon_within_budget(run):
        return "spool", "no daemon answered in time"
    remaining = run.deadline - time.monotonic() - SPOOL_RESERVE_S
    if remaining <= 0:
        return "spool", "the budget was spent before the request"
    try:
        client = DaemonClient(run.socket, timeout_s=remaining)
    except DaemonUnavailable:
        return "spool", "the daemon did not accept the connection"
    with client:
        try:
            result = client.call("remember", **params)
        except DaemonError as exc:
            if exc.exit_code == 2 and exc.rpc_code != protocol.TIMEOUT:
                return "refused", str(exc)  # bad input is refused at intake as well
            # Stopping, overloaded or late: the intake's near-duplicate rule folds the
            # record into the memory if the daemon did store it after all.
            return "spool", f"the daemon answered {exc.code}"
        except (DaemonUnavailable, OSError, ValueError):
            # Sent but not answered in time: it may land; spooling keeps it if it does not.
            return "spool", "the daemon did not answer in time"
    return "recorded", str(result.get("id"))


def stop_hook(run: HookRun) -> str:
    """Store the last turn through the daemon's ``remember`` (kind episode, this session),
    or in the spool; nothing on stdout."""
    turn = _turn(run)
    if turn is None:
        note("stop", "no user prompt in the end of the transcript, nothing recorded")
        return ""
    content = episode_text(turn)
    if len(content) < MIN_CONTENT_CHARS:
        note("stop", "the turn is too short to record")
        return ""
    # The time is the turn's, not the intake's: a spooled episode keeps when it happened.
    params = {"content": content, "kind": "episode", "realm": run.realm,
              "session": run.session, "event_time": spool.now_iso()}  # fmt: skip
    fate, said = _deliver(run, params)
    # One line in all: the missing session is said on it rather than on a second one.
    nosession = "" if run.session else " (the hook input has no 'session_id': no session)"
    if fate == "recorded":
        note("stop", f"recorded the turn as episode {said} in realm {run.realm}; "
                     f"{run.elapsed_ms():.0f} ms{nosession}")  # fmt: skip
    elif fate == "refused" or run.settings is None:
        note("stop", f"the turn was not recorded: {clip(said, 200)}{nosession}")
    else:
        path = spool.spool_path(run.settings.store_path)
        spool.append(path, "remember", params)
        note("stop", f"{said}: the turn waits in the spool {path} for the daemon"
                     f"{nosession}")  # fmt: skip
    return ""

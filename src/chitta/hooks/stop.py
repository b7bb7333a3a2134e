"""``chitta hook stop`` (Stop): record the turn that just ended as two episode memories.

The user's prompt and the assistant's reply are stored apart, each with the session and its
``role`` as its source, so that recall can tell them apart: the prompt hook never injects
the assistant's own answer back into its session, and scoring ranks it below a user's
statement of equal relevance in later sessions (recall/scoring.py, the provenance factor).

Each goes through the daemon's ``remember`` when a daemon answers within the budget (one is
started when none runs); otherwise into the spool (chitta/spool.py), which the daemon takes
in when it starts. Either way nothing is lost, and the hook stays within
CHITTA_HOOK_BUDGET_MS. When the daemon took the turn, the hook then asks it which of the
memories the prompt hook gave this turn the answer drew on (``session_used``,
recall/usage.py): those used together are linked for the graph lane. That is a learning
signal, not a record: when the budget or the daemon does not allow it, it is skipped.
What the hook did is one line on stderr: a Stop hook's stdout is not context for the model.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from chitta import spool
from chitta.config import MAX_CONTENT_CHARS, MIN_CONTENT_CHARS
from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.errors import BadDate, DaemonUnavailable, InputError
from chitta.hooks.calls import Call, run_calls
from chitta.hooks.render import clip
from chitta.hooks.run import HookRun, daemon_within_budget, note
from chitta.hooks.transcript import Turn, last_turn
from chitta.validate import parse_time

#: What the hook keeps of its budget to write the spool if the daemon does not answer.
SPOOL_RESERVE_S = 0.15


def episode_records(turn: Turn) -> list[tuple[str, str]]:
    """(role, content) of the turn's memories: the prompt and the reply, each within the
    memory size limit; a side too short to be a memory is left out."""
    sides = [("user", turn.prompt.strip()), ("assistant", turn.reply.strip())]
    return [(role, text[:MAX_CONTENT_CHARS]) for role, text in sides
            if len(text) >= MIN_CONTENT_CHARS]  # fmt: skip


def _when(stamp: str | None) -> int | None:
    """The transcript timestamp as ms, or None if it is missing or not a date we accept."""
    try:
        return parse_time(stamp, "timestamp")
    except BadDate:
        return None


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
        turn = Turn(prompt=turn.prompt, reply=reply.strip(), at=turn.at)
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
    distilled = len(result.get("distilled") or ())  # fragments of it (docs/distill.md)
    return "recorded", str(result.get("id")) + (f" ({distilled} distilled)" if distilled else "")


def _used(run: HookRun, turn: Turn) -> str:
    """Ask the daemon which memories given for this turn the answer drew on; what it said,
    for the hook's line ("" when it was not asked or did not answer)."""
    params = {"session": run.session, "answer": turn.reply.strip()[:MAX_CONTENT_CHARS],
              "prompt": turn.prompt.strip()[:MAX_CONTENT_CHARS]}  # fmt: skip
    (out,) = run_calls(run.socket, [Call("used", "session_used", params)], run.deadline)
    if out.result is None:
        return f"; drawn-on test skipped ({out.failure})"
    given, used = out.result.get("given", 0), len(out.result.get("used", ()))
    return f"; the answer drew on {used} of the {given} memories given" if given else ""


def _record(run: HookRun, role: str, params: dict[str, Any]) -> tuple[str, bool]:
    """One side of the turn through the daemon or into the spool: what became of it, and
    whether the daemon took it."""
    fate, said = _deliver(run, params)
    if fate == "recorded":
        return f"{role} {said}", True
    if fate == "refused" or run.settings is None:
        return f"{role}'s side not recorded: {clip(said, 200)}", False
    path = run.settings.spool_path
    spool.append(path, "remember", params)
    return f"{role}'s side in the spool {path} ({said})", False


def stop_hook(run: HookRun) -> str:
    """Store the last turn through the daemon's ``remember`` (kind episode, this session,
    one memory per side with its role), or in the spool; nothing on stdout."""
    turn = _turn(run)
    if turn is None:
        note("stop", "no user prompt in the end of the transcript, nothing recorded")
        return ""
    records = episode_records(turn)
    if not records:
        note("stop", "the turn is too short to record")
        return ""
    # The time is the turn's (the transcript's stamp, else now), not the intake's: a
    # spooled episode keeps when it happened.
    offset = run.settings.clock_offset_ms if run.settings is not None else 0
    when = turn.at if _when(turn.at) is not None else spool.now_iso(offset)
    base = {"kind": "episode", "realm": run.realm, "session": run.session, "event_time": when}
    fates = [_record(run, role, {**base, "content": content, "role": role})
             for role, content in records]  # fmt: skip
    done = [said for said, _ in fates]
    used = _used(run, turn) if run.session and any(ok for _, ok in fates) else ""
    # One line in all: the missing session is said on it rather than on a second one.
    nosession = "" if run.session else " (the hook input has no 'session_id': no session)"
    note("stop", f"recorded the turn as episodes {', '.join(done)} in realm {run.realm}"
                 f"{used}; {run.elapsed_ms():.0f} ms{nosession}")  # fmt: skip
    return ""

"""``chitta hook stop`` (Stop): record the turn that just ended as two episode memories.

The user's prompt and the assistant's reply are stored apart, each with the session and its
``role`` as its source, so that recall can tell them apart: the prompt hook never injects
the assistant's own answer back into its session, and scoring ranks it below a user's
statement of equal relevance in later sessions (recall/scoring.py, the provenance factor).
"""

from __future__ import annotations

from pathlib import Path

from chitta.config import MAX_CONTENT_CHARS, MIN_CONTENT_CHARS
from chitta.errors import BadDate, InputError
from chitta.hooks.calls import Call, run_calls
from chitta.hooks.render import TAG, clip
from chitta.hooks.run import HookRun
from chitta.hooks.transcript import Turn, last_turn
from chitta.validate import parse_time


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
    if not Path(path).is_file():
        raise InputError(f"no transcript at {path}")
    turn = last_turn(Path(path))
    reply = run.event.get("last_assistant_message")
    if turn is not None and isinstance(reply, str) and reply.strip():
        turn = Turn(prompt=turn.prompt, reply=reply.strip(), at=turn.at)
    return turn


def stop_hook(run: HookRun) -> str:
    """Store the last turn through the daemon's ``remember``: kind episode, this session,
    one memory per side with its role."""
    turn = _turn(run)
    if turn is None:
        return f"{TAG} stop: no user prompt in the end of the transcript, nothing recorded"
    records = episode_records(turn)
    if not records:
        return f"{TAG} stop: the turn is too short to record"
    base = {"kind": "episode", "realm": run.realm, "session": run.session}
    if _when(turn.at) is not None:  # when the user asked, which a replayed transcript sets
        base["event_time"] = turn.at
    calls = [Call(role, "remember", {**base, "content": content, "role": role})
             for role, content in records]  # fmt: skip
    done, lost = [], []
    for outcome in run_calls(run.socket, calls, run.deadline):
        if outcome.result is None:
            reason = "timeout" if outcome.failure == "timeout" else clip(outcome.message, 200)
            lost.append(f"the {outcome.name}'s side was not recorded ({reason})")
        else:
            done.append(f"{outcome.name} {outcome.result.get('id')}")
    said = f"recorded the turn as episodes {', '.join(done)}" if done else "recorded nothing"
    return f"{TAG} stop: {'; '.join([said, *lost])} in realm {run.realm}; {run.elapsed_ms():.0f} ms"

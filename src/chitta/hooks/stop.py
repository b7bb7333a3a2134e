"""``chitta hook stop`` (Stop): record the turn that just ended as an episode memory."""

from __future__ import annotations

from pathlib import Path

from chitta.config import MAX_CONTENT_CHARS, MIN_CONTENT_CHARS
from chitta.errors import BadDate, InputError
from chitta.hooks.calls import Call, run_calls
from chitta.hooks.render import TAG, clip
from chitta.hooks.run import HookRun
from chitta.hooks.transcript import Turn, last_turn
from chitta.validate import parse_time

#: Share of the memory's size limit each side of the turn may take.
_HALF = MAX_CONTENT_CHARS // 2 - 64


def episode_text(turn: Turn) -> str:
    """The episode's content: the user's prompt and the assistant's reply, each bounded."""
    return f"user: {turn.prompt[:_HALF]}\nassistant: {turn.reply[:_HALF]}".strip()


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
    """Store the last turn through the daemon's ``remember`` (kind episode, this session)."""
    turn = _turn(run)
    if turn is None:
        return f"{TAG} stop: no user prompt in the end of the transcript, nothing recorded"
    content = episode_text(turn)
    if len(content) < MIN_CONTENT_CHARS:
        return f"{TAG} stop: the turn is too short to record"
    params = {"content": content, "kind": "episode", "realm": run.realm, "session": run.session}
    if _when(turn.at) is not None:  # when the user asked, which a replayed transcript sets
        params["event_time"] = turn.at
    call = Call("remember", "remember", params)
    (outcome,) = run_calls(run.socket, [call], run.deadline)
    if outcome.result is None:
        reason = "timeout" if outcome.failure == "timeout" else clip(outcome.message, 200)
        return f"{TAG} stop: the turn was not recorded ({reason})"
    return (f"{TAG} stop: recorded the turn as episode {outcome.result.get('id')} in realm "
            f"{run.realm}; {run.elapsed_ms():.0f} ms")  # fmt: skip

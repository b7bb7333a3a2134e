"""``chitta hook session-start`` (SessionStart): the realm's standing corrections and
preferences, bounded, as context for the session, answered as Claude Code's JSON output.

There is no daemon method that lists a realm's memories by kind, so this is a recall: a
hybrid query that names corrections and preferences, keeping the rows of those kinds (their
kind prior ranks them up), plus the corrections the keyed lookup returns for the query.

The event's ``source`` says what happened to the session's context, and so what it has seen:
``startup`` and ``resume`` keep the session's shown set (a resumed session's context still
holds what it was shown: nothing is repeated); ``compact`` and ``clear`` forget it first (the
context was summarised or emptied: what matters is shown once again).
"""

from __future__ import annotations

import sys

from chitta.errors import InputError
from chitta.hooks.calls import Call, run_calls
from chitta.hooks.output import hook_output
from chitta.hooks.render import TAG, clip, memory_line
from chitta.hooks.run import HookRun

#: At most this many standing memories are shown.
MAX_STANDING = 20
STANDING_KINDS = ("correction", "preference")
#: Words that corrections and preferences tend to use; the realm's name is added.
STANDING_QUERY = "correction preference always never prefer instead avoid must should don't use"
EVENT = "SessionStart"
#: Claude Code's sources, and whether each forgets what the session was shown.
SOURCES = {"startup": False, "resume": False, "clear": True, "compact": True}


def _source(run: HookRun) -> str:
    source = run.event.get("source", "startup")  # older Claude Code sends none
    if source not in SOURCES:
        raise InputError(f"unknown SessionStart source {clip(str(source), 40)!r}; "
                         f"expected one of: {', '.join(SOURCES)}")  # fmt: skip
    return source


def session_start_hook(run: HookRun) -> str:
    """The standing corrections and preferences not yet shown to the session, as context."""
    source = _source(run)
    query = f"{STANDING_QUERY} {run.realm}"
    calls = [Call("standing", "recall", {"query": query, "realm": run.realm,
                                         "strategy": "hybrid", "limit": 100})]  # fmt: skip
    if run.session:
        calls.append(Call("shown", "session_shown", {"session": run.session,
                                                     "forget": SOURCES[source]}))  # fmt: skip
    outcome, *shown_reply = run_calls(run.socket, calls, run.deadline)
    if outcome.result is None:
        reason = "timeout" if outcome.failure == "timeout" else clip(outcome.message, 200)
        print(f"{TAG} session-start: standing memories of realm {run.realm} not read "
              f"({reason})", file=sys.stderr)  # fmt: skip
        return ""
    shown = set()
    if shown_reply and shown_reply[0].result is not None:
        shown = {str(i) for i in shown_reply[0].result.get("shown", [])}
    rows = list(outcome.result.get("corrections", []))
    rows += [h for h in outcome.result.get("hits", []) if h.get("kind") in STANDING_KINDS]
    lines: list[str] = []
    ids: list[str] = []
    for row in rows:
        memory_id = str(row.get("id"))
        if memory_id not in shown and memory_id not in ids and len(lines) < MAX_STANDING:
            ids.append(memory_id)
            lines.append(memory_line(row, run.hook.clip_chars, run.realm, run.now_s))
    if run.session and ids:
        note = Call("note", "session_shown", {"session": run.session, "add": ids})
        run_calls(run.socket, [note], run.deadline)
    if run.admit_debug:
        print(f"{TAG} realm {run.realm} ({source}): {len(lines)} standing corrections and "
              f"preferences (at most {MAX_STANDING}), {len(shown)} shown before; "
              f"{run.elapsed_ms():.0f} ms of {run.hook.budget_ms} ms", file=sys.stderr)  # fmt: skip
    if not lines:
        return ""
    heading = f"Standing corrections and preferences stored in chitta (realm {run.realm}):"
    return hook_output(EVENT, [heading, *lines])

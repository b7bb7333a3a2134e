"""``chitta hook prompt`` (UserPromptSubmit): the recall lanes in parallel under the budget,
merged into memory lines stated as facts, answered as Claude Code's JSON hook output.

The model sees the band as a fact and the admitted memories; the diagnostics (the summary of
lanes and drops, the gate's per-row lines, the time spent) go to stderr with
``CHITTA_ADMIT_DEBUG=1`` only. Within one Claude Code session a memory is injected once: the
session's shown set (recall/shown.py, in the daemon) is read beside the lanes and the new
ids are added to it after the merge.
"""

from __future__ import annotations

import sys

from chitta.errors import InputError
from chitta.hooks.admission import gate_view
from chitta.hooks.calls import Call, Outcome, run_calls
from chitta.hooks.lanes import HYB_LIMIT, LANES, Ask, lane_calls
from chitta.hooks.output import hook_output
from chitta.hooks.render import TAG, Merge, merge, summary
from chitta.hooks.run import HookRun
from chitta.recall.confidence.gate import is_terse_negation

# The most prompt text sent as the query is recall's limit on a query: a hook cuts a longer
# prompt there rather than be refused (it never fails the user's turn).
from chitta.validate import MAX_QUERY_CHARS, scrub_text

EVENT = "UserPromptSubmit"
#: The band stated as a fact about the store (never as an instruction to the model).
BAND_FACTS = {"KNOWN": "this store holds memories on this",
              "UNKNOWN": "this store holds little on this"}  # fmt: skip


def context_lines(merged: Merge, realm: str, band: str | None) -> list[str]:
    """What the model sees: a heading that states the band, then one line per memory; no
    lines at all when nothing was admitted."""
    if not merged.lines:
        return []
    fact = BAND_FACTS.get(band or "")
    heading = f"Memories chitta recalled for this prompt (realm {realm})"
    return [f"{heading}; {fact}:" if fact else f"{heading}:", *merged.lines]


def _shown(outcome: Outcome | None) -> tuple[set[str], str | None]:
    """The ids the session was shown, and why they are unknown (None: they are known)."""
    if outcome is None:
        return set(), None
    if outcome.result is None:
        return set(), f"shown set not read ({outcome.failure})"
    return {str(i) for i in outcome.result.get("shown", [])}, None


def prompt_hook(run: HookRun) -> str:
    """The JSON output for one prompt: the band and the memories not shown to this session
    before, as context; nothing at all when none is admitted."""
    prompt = run.event.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("the hook input has no 'prompt' text (is this UserPromptSubmit?)")
    if not prompt.strip():
        return ""
    # A lone surrogate (JSON's "\\ud800" in the event) would get the query refused.
    query = scrub_text(prompt.strip()[:MAX_QUERY_CHARS])
    ask = Ask(query=query, realm=run.realm, session=run.session, now_s=run.now_s)
    calls = lane_calls(ask, topics=not is_terse_negation(ask.query))
    if ask.session:
        calls.append(Call("shown", "session_shown", {"session": ask.session}))
    outcomes = run_calls(run.socket, calls, run.deadline)
    shown, trouble = _shown(next((o for o in outcomes if o.name == "shown"), None))
    lane_outcomes = [o for o in outcomes if o.name != "shown"]
    gate = gate_view(lane_outcomes, ask.query, run.realm, run.gate, HYB_LIMIT)
    merged = merge(LANES, lane_outcomes, ask, run.hook.clip_chars, gate, shown)
    if ask.session and merged.ids:
        add = [memory_id for _, memory_id in merged.ids]
        (noted,) = run_calls(run.socket, [Call("note", "session_shown", {
            "session": ask.session, "add": add})], run.deadline)  # fmt: skip
        if noted.result is None:
            trouble = f"shown set not updated ({noted.failure})"
    if run.admit_debug:
        debug = [*merged.debug, *(f"chitta shown: lane={lane} id={memory_id}"
                                  for lane, memory_id in merged.ids)]  # fmt: skip
        debug.append(summary(merged, run.realm, run.elapsed_ms(), run.hook.budget_ms))
        if trouble:
            debug.append(f"{TAG} {trouble}")
        print("\n".join(debug), file=sys.stderr)
    return hook_output(EVENT, context_lines(merged, run.realm, gate.band))

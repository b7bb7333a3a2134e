"""``chitta hook prompt`` (UserPromptSubmit): the recall lanes in parallel under the budget,
merged into lane-tagged lines and one summary line."""

from __future__ import annotations

import sys

from chitta.errors import InputError
from chitta.hooks.admission import gate_view
from chitta.hooks.calls import run_calls
from chitta.hooks.lanes import HYB_LIMIT, LANES, Ask, lane_calls
from chitta.hooks.render import TAG, merge, summary
from chitta.hooks.run import HookRun
from chitta.recall.gate import is_terse_negation

#: The most prompt text sent as the query: the embedder reads 256 tokens, and keyword terms
#: beyond this say little more.
MAX_QUERY_CHARS = 2000


def prompt_hook(run: HookRun) -> str:
    """The context for one prompt: the band in words, the admitted memories one per line,
    then the summary."""
    prompt = run.event.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("the hook input has no 'prompt' text (is this UserPromptSubmit?)")
    if not prompt.strip():
        return f"{TAG} realm {run.realm}: empty prompt, nothing recalled"
    ask = Ask(query=prompt.strip()[:MAX_QUERY_CHARS], realm=run.realm, session=run.session)
    calls = lane_calls(ask, topics=not is_terse_negation(ask.query))
    outcomes = run_calls(run.socket, calls, run.deadline)
    gate = gate_view(outcomes, ask.query, run.realm, run.gate, HYB_LIMIT)
    merged = merge(LANES, outcomes, ask, run.hook.clip_chars, gate)
    if run.admit_debug and merged.debug:
        print("\n".join(merged.debug), file=sys.stderr)
    band = [f"{TAG} {gate.words}"] if gate.words else []
    return "\n".join([*band, *merged.lines, summary(merged, run.realm, run.elapsed_ms(),
                                                     run.hook.budget_ms)])  # fmt: skip

"""Model distillation's exchange (issue 22 part 2; docs/distill.md#model-distillation): the
fixed prompt a finished session is sent with, and the strict reading of what comes back.

The session's turns are numbered ``[1]``, ``[2]``… in the prompt, and the model cites those
numbers (a ULID is easy to garble, a small number is not). :func:`read_reply` keeps a
curated memory only if every part of it checks out, and counts each one it rejects by why:

- ``malformed``: the reply is not the JSON object asked for (the whole reply is rejected);
- ``invalid``: an entry is not an object with text ``content``, a ``turns`` list and a number
  ``confidence`` in [0, 1], or its content is empty or too long;
- ``unknown_kind``: its ``kind`` is not one of :data:`KINDS`;
- ``unknown_turn``: it cites no turn, or a turn the prompt did not have;
- ``secret``: its content looks like it holds a credential (distill/secrets.py);
- ``unsure``: its confidence is below the settings' ``min_confidence``.

An empty ``memories`` list is the model saying nothing is worth keeping (``abstained``).
Turns whose text looks like it holds a credential are never sent: the prompt says
``[N] user: (withheld: looks like it holds a credential)`` in their place.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from chitta.config import MAX_CONTENT_CHARS
from chitta.distill.secrets import looks_secret
from chitta.store.kinds import Kind
from chitta.store.records import Memory

#: The prompt's version: part of every distilled memory's ``via``, so a memory says which
#: instructions made it. Change the number whenever the text below changes.
PROMPT_VERSION = "prompt-1"
#: The kinds a curated memory may have, and what the prompt says each is.
KINDS: dict[str, str] = {
    "correction": "the user said the assistant was wrong, or said what not to do",
    "preference": "the user's lasting taste, habit or rule",
    "approach": "a decision that was taken, with its reason",
    "failure": "something that failed, with its cause or its fix",
    "insight": "a fact about the project, the user or their work that was established",
    "wisdom": "a general lesson learned, worth applying elsewhere",
}
#: A turn's text as sent: longer turns are cut (a pasted log says little per character).
TURN_CHARS = 2000
WITHHELD = "(withheld: looks like it holds a credential)"
#: The most memories read from one reply; the rest are counted ``invalid``.
MAX_MEMORIES = 50

PROMPT_TEMPLATE = """\
You curate the long-term memory of an AI coding assistant. Below is a finished conversation \
between a user and the assistant, as numbered turns. Write down only what will still be worth \
knowing in a later session, as memories of these kinds:

{kinds}

Rules:
1. Each memory is one or two self-contained sentences that name what they are about \
(no "it" or "this" that needs the conversation to be understood).
2. Cite the numbers of the turns each memory draws on.
3. Give your confidence that the memory is true and lasting, from 0 to 1.
4. Never write down passwords, keys, tokens or other secrets.
5. Leave out small talk, questions, plans that were dropped, and anything true only during \
this conversation. If nothing is worth keeping, answer {{"memories": []}}.

Answer with JSON only, in exactly this form:
{{"memories": [{{"kind": "preference", "content": "...", "turns": [1, 3], "confidence": 0.9}}]}}

Turns:
{turns}
"""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Curated:
    """One memory the model returned that passed every check."""

    kind: Kind
    content: str
    turns: tuple[str, ...]  # the memory ids of the turns it cites, in the session's order
    confidence: float


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reply gave: the memories kept and how many were rejected, by why."""

    kept: tuple[Curated, ...] = ()
    rejected: Counter[str] = field(default_factory=Counter)
    abstained: bool = False


def turn_line(number: int, turn: Memory) -> str:
    """``[N] role: text``, the text on one line, cut to :data:`TURN_CHARS`; a turn that
    looks like it holds a credential is withheld."""
    text = " ".join(turn.content.split())
    if looks_secret(turn.content):
        text = WITHHELD
    elif len(text) > TURN_CHARS:
        text = text[: TURN_CHARS - 1].rstrip() + "…"
    return f"[{number}] {turn.source.role or 'user'}: {text}"


def build_prompt(turns: Sequence[Memory]) -> str:
    """The fixed prompt (version :data:`PROMPT_VERSION`) for ``turns``, numbered from 1."""
    kinds = "\n".join(f"- {name}: {what}" for name, what in KINDS.items())
    lines = "\n".join(turn_line(i, t) for i, t in enumerate(turns, start=1))
    return PROMPT_TEMPLATE.format(kinds=kinds, turns=lines)


def read_reply(text: str, turns: Sequence[Memory], min_confidence: float) -> Reading:
    """The curated memories in the model's reply ``text`` to a prompt of ``turns``."""
    data = _json_object(text)
    memories = data.get("memories") if isinstance(data, dict) else None
    if not isinstance(memories, list):
        return Reading(rejected=Counter(malformed=1))
    if not memories:
        return Reading(abstained=True)
    rejected: Counter[str] = Counter()
    kept: list[Curated] = []
    if len(memories) > MAX_MEMORIES:
        rejected["invalid"] += len(memories) - MAX_MEMORIES
    for entry in memories[:MAX_MEMORIES]:
        why, curated = _check(entry, turns, min_confidence)
        if curated is not None:
            kept.append(curated)
        else:
            rejected[why] += 1
    return Reading(kept=tuple(kept), rejected=rejected)


def _json_object(text: str) -> object:
    """The JSON object of a reply: the whole text, a fenced block, or the text from its
    first ``{`` to its last ``}`` (models wrap JSON in prose now and then); None if none."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
    return None


def _check(
    entry: object, turns: Sequence[Memory], min_confidence: float
) -> tuple[str, Curated | None]:
    """(why it is rejected, "" if it is not; the memory if it is kept)."""
    if not isinstance(entry, dict):
        return "invalid", None
    content, cited, confidence = entry.get("content"), entry.get("turns"), entry.get("confidence")
    if not isinstance(content, str) or not content.strip() or len(content) > MAX_CONTENT_CHARS:
        return "invalid", None
    if not isinstance(cited, list) or isinstance(confidence, bool):
        return "invalid", None
    if not isinstance(confidence, int | float) or not math.isfinite(confidence):
        return "invalid", None
    if not 0.0 <= confidence <= 1.0:
        return "invalid", None
    kind = entry.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return "unknown_kind", None
    numbers = [n for n in cited if isinstance(n, int) and not isinstance(n, bool)]
    if not cited or len(numbers) != len(cited) or any(not 1 <= n <= len(turns) for n in numbers):
        return "unknown_turn", None
    if looks_secret(content):
        return "secret", None
    if confidence < min_confidence:
        return "unsure", None
    ids = tuple(turns[n - 1].id for n in sorted(set(numbers)))
    return "", Curated(Kind(kind), " ".join(content.split()), ids, float(confidence))

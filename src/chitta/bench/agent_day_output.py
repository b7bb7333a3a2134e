"""Reading what a hook printed, and telling which recorded turns it injected.

The hooks' output format is changing (issue 16 parts 2-4): today each line of stdout is
context; Claude Code's structured form is one JSON object whose
``hookSpecificOutput.additionalContext`` is what the model sees and whose ``systemMessage``
only the user sees. :func:`parse_hook_output` is the one place that knows both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

#: A memory id: a ULID (26 characters of Crockford base32), whatever the line around it says.
_ULID = re.compile(r"(?<![0-9A-Za-z])[0-9A-HJKMNP-TV-Z]{26}(?![0-9A-Za-z])")
#: Characters of a recorded prompt that identify its episode in injected text when no id does.
_KEY_CHARS = 48


@dataclass(frozen=True, slots=True)
class HookOutput:
    """What one hook run gave: the model's context, the user's notice, and the ids named."""

    context: str  # what goes into the model's context
    notice: str  # what only the user sees (systemMessage)
    ids: tuple[str, ...]  # memory ids in ``context``, first occurrence order

    @property
    def tokens(self) -> float:
        """The context's size in tokens, estimated as characters / 4."""
        return len(self.context) / 4


def parse_hook_output(stdout: str) -> HookOutput:
    """The context, notice and memory ids of a hook's stdout: plain text lines (all of it is
    context, as Claude Code reads a plain stdout) or one JSON object (Claude Code's
    structured hook output)."""
    text = stdout.strip()
    context, notice = text, ""
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            specific = obj.get("hookSpecificOutput")
            extra = specific.get("additionalContext") if isinstance(specific, dict) else None
            context = extra if isinstance(extra, str) else ""
            notice = obj["systemMessage"] if isinstance(obj.get("systemMessage"), str) else ""
    return HookOutput(context, notice, tuple(dict.fromkeys(_ULID.findall(context))))


#: A Stop hook's report of one side of the turn: "user <id>" or "assistant <id>".
_SIDE = re.compile(r"\b(user|assistant) ([0-9A-HJKMNP-TV-Z]{26})(?![0-9A-Za-z])")


def recorded_ids(stdout: str, stderr: str = "") -> list[tuple[str | None, str]]:
    """The memories a Stop hook reports having recorded, each with its side (``user`` or
    ``assistant``; ``None`` when the report does not say), in either format."""
    text = f"{stdout}\n{stderr}"
    sided = [(role, mid) for role, mid in _SIDE.findall(text)]
    return sided or [(None, mid) for mid in dict.fromkeys(_ULID.findall(text))]


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Episode:
    """A recorded turn: its memory id (if the Stop hook named it), session, turn ids, key."""

    ref: str  # the memory id, or "turn:<first dia_id>" when the hook named none
    session: str  # the Claude Code session that recorded it
    turns: tuple[str, ...]
    key: str  # the start of the prompt, flattened, to find the episode by content
    role: str | None = None  # the side of the turn it holds; None: both, or not said


@dataclass(slots=True)
class Ledger:
    """The episodes recorded for one question, and what each session was shown."""

    episodes: dict[str, Episode] = field(default_factory=dict)
    shown: dict[str, set[str]] = field(default_factory=dict)  # session -> refs injected

    def record(self, memory_id: str | None, session: str, turns: tuple[str, ...],
               prompt: str, role: str | None = None) -> None:  # fmt: skip
        """Note a Stop hook's episode (a near-duplicate may fold into an existing id)."""
        ref = memory_id or f"turn:{turns[0]}"
        known = self.episodes.get(ref)
        if known is not None:
            turns = tuple(dict.fromkeys((*known.turns, *turns)))
            session, role = known.session, known.role
        self.episodes[ref] = Episode(ref, session, turns, _flat(prompt)[:_KEY_CHARS], role)

    def injected(self, out: HookOutput) -> list[str]:
        """The refs ``out`` injected: memory ids it names (known here or not), and recorded
        episodes without an id whose prompt start appears in the context."""
        refs = list(out.ids)
        flat = _flat(out.context)
        for ep in self.episodes.values():
            if ep.ref.startswith("turn:") and len(ep.key) >= 16 and ep.key in flat:
                refs.append(ep.ref)
        return refs

    def show(self, session: str, refs: list[str]) -> tuple[int, int]:
        """Note ``refs`` shown in ``session``: (repeats of refs it was shown before, self-echo:
        the assistant's answers this same session recorded — an episode of both sides counts)."""
        seen = self.shown.setdefault(session, set())
        repeats = sum(1 for r in refs if r in seen)
        echo = sum(1 for r in refs if (ep := self.episodes.get(r)) and ep.session == session
                   and ep.role != "user")  # fmt: skip
        seen.update(refs)
        return repeats, echo

    def gold_hits(self, refs: list[str], gold: tuple[str, ...]) -> list[str]:
        """The gold turns held by the episodes among ``refs``."""
        wanted = set(gold)
        hits = {t for r in refs if (ep := self.episodes.get(r)) for t in ep.turns if t in wanted}
        return sorted(hits)

"""Loading a benchmark file in LoCoMo's format (Maharana et al., ACL 2024).

A file is a list of conversations. Each has ``conversation`` (``speaker_a``, ``speaker_b``,
``session_<n>`` lists of turns ``{speaker, dia_id, text, blip_caption?}`` and
``session_<n>_date_time`` strings such as ``"1:56 pm on 8 May, 2023"``) and ``qa`` (questions
with ``evidence``: gold turn ids ``D<session>:<turn>``, and a ``category``). Evidence ids that
are malformed are repaired where the intended turn is certain, and dropped otherwise; both
are reported.

A file written from LongMemEval (Wu et al., ICLR 2025; ../shared/data/README.md) gives each
question its ``question_type`` (the name of its category code) and its ``question_date``
(``"2023/05/30 (Tue) 03:16"``): the question's "now", which relative times are read against.
A dataset's category names are its own: LoCoMo's five (:data:`LOCOMO`), LongMemEval's six
(:data:`LONGMEMEVAL`), or whatever ``question_type`` names another file gives its codes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chitta.errors import BadArgument, BadDate
from chitta.validate import parse_time

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
#: LongMemEval's question types under the codes ../shared/data/README.md gives them.
LONGMEMEVAL_TYPES = {1: "single-session-user", 2: "single-session-assistant",
                     3: "single-session-preference", 4: "multi-session", 5: "knowledge-update",
                     6: "temporal-reasoning"}  # fmt: skip
_QUESTION_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))? (\d{2}):(\d{2})$")
_SESSION = re.compile(r"^session_(\d+)$")
_TURN_ID = re.compile(r"^D(\d+):(\d+)$")
# A malformed id that still names one turn: "D:11:26", "D30:05", "d3 : 4".
_LOOSE_ID = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Turn:
    id: str  # dia_id, e.g. "D3:14"
    session: int
    speaker: str
    text: str
    caption: str | None
    event_time: int | None  # the session's date and time, ms since the epoch (UTC)

    @property
    def memory_text(self) -> str:
        """What a memory system stores for this turn: ``speaker: text`` plus any image caption."""
        base = f"{self.speaker}: {self.text}"
        return f"{base} [image: {self.caption}]" if self.caption else base


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    index: int
    question: str
    category: int
    gold: tuple[str, ...]
    question_type: str | None = None  # the file's name of the category (LongMemEval's type)
    now_ms: int | None = None  # when it is asked (``question_date``); None: the real clock


@dataclass(frozen=True, slots=True)
class Categories:
    """A dataset's question categories: each code's name, the groups of codes scored beside
    each category and ``all`` (LoCoMo's ``1-4``: every category but adversarial), and the
    metrics its report tables per category."""

    dataset: str  # what the report calls it: "LoCoMo", "LongMemEval", or the file's name
    names: Mapping[int, str]
    groups: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    per_category: tuple[str, ...] = ("recall@10",)

    def keys(self) -> tuple[str, ...]:
        """The aggregate's keys in table order: each category, each group, ``all``."""
        return (*(str(c) for c in sorted(self.names)), *self.groups, "all")

    def label(self, key: str) -> str:
        """A table's column head: ``multi-hop (1)``; a group's key as it is."""
        name = self.names.get(int(key)) if key.isdigit() else None
        return f"{name} ({key})" if name else key

    def as_record(self) -> dict[str, Any]:
        """For the results JSON (:meth:`from_record` reads it back)."""
        return {"dataset": self.dataset, "names": {str(c): n for c, n in self.names.items()},
                "groups": {g: list(c) for g, c in self.groups.items()},
                "per_category": list(self.per_category)}  # fmt: skip

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> Categories:
        """A results JSON's categories; LoCoMo's for a file written before they were kept."""
        if not record:
            return LOCOMO
        return cls(str(record["dataset"]), {int(c): str(n) for c, n in record["names"].items()},
                   {g: tuple(c) for g, c in record.get("groups", {}).items()},
                   tuple(record.get("per_category", ("recall@10",))))  # fmt: skip


LOCOMO = Categories("LoCoMo", CATEGORIES, {"1-4": (1, 2, 3, 4)})
#: A random ranking finds much of a single-session question's evidence among ~50 sessions,
#: so LongMemEval's tables show nDCG@10 and MRR per type beside recall@10.
LONGMEMEVAL = Categories("LongMemEval", LONGMEMEVAL_TYPES,
                         per_category=("recall@10", "ndcg@10", "mrr"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    sessions: tuple[tuple[int, int | None], ...]  # (session number, start ms)
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class Repair:
    """What happened to one malformed evidence id."""

    conversation: str
    question: int
    raw: str
    repaired: tuple[str, ...]
    dropped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dataset:
    path: str
    conversations: tuple[Conversation, ...]
    repairs: tuple[Repair, ...]
    categories: Categories = LOCOMO

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]


def parse_session_time(text: str) -> int:
    """``"1:56 pm on 8 May, 2023"`` as ms since the epoch (the file gives no zone: UTC)."""
    try:
        moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        raise BadDate(f"not a LoCoMo session time: {text!r}") from None
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def parse_question_date(text: object) -> int:
    """A question's date as ms since the epoch: LongMemEval's ``"2023/05/30 (Tue) 03:16"``
    or ISO 8601 (no zone: UTC). The weekday is not checked."""
    if isinstance(text, str) and (m := _QUESTION_DATE.match(text.strip())):
        try:
            moment = datetime(*(int(g) for g in m.groups()), tzinfo=UTC)  # type: ignore[misc]
        except ValueError:
            raise BadDate(f"not a date: {text!r}") from None
        return int(moment.timestamp() * 1000)
    if isinstance(text, str) and "/" not in text:
        ms = parse_time(text, "question_date")
        if ms is not None:
            return ms
    raise BadDate(f"not a question date: {text!r} (expected e.g. '2023/05/30 (Tue) 03:16')")


def categories_of(items: list, path: Path) -> Categories:
    """The file's category names: those its ``question_type`` fields give the codes, or
    LoCoMo's when it has none. One code with two names is refused."""
    names: dict[int, str] = {}
    for item in items:
        for qa in item.get("qa", []) if isinstance(item, dict) else []:
            kind = qa.get("question_type") if isinstance(qa, dict) else None
            if not isinstance(kind, str):
                continue
            code = int(qa.get("category", 0))
            if names.setdefault(code, kind) != kind:
                raise BadArgument(f"{path}: category {code} is both {names[code]!r} and {kind!r}")
    if not names:
        return LOCOMO
    if names.items() <= LONGMEMEVAL_TYPES.items():  # LongMemEval, all its types or some
        return LONGMEMEVAL
    return Categories(path.stem, names, per_category=LONGMEMEVAL.per_category)


def repair_evidence(raw: str, known: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(ids, dropped parts) for one evidence string.

    A string may hold several ids (``"D8:6; D9:17"``, ``"D9:1 D4:4"``); each part is
    normalised (``"D:11:26"`` → ``D11:26``, ``"D30:05"`` → ``D30:5``) and kept only if the
    conversation has that turn.
    """
    ids: list[str] = []
    dropped: list[str] = []
    parts = [p for p in re.split(r"[;,]\s*|\s+(?=D)", raw.strip()) if p.strip()]
    for part in parts or [raw]:
        match = _LOOSE_ID.match(part.strip())
        candidate = f"D{int(match[1])}:{int(match[2])}" if match else None
        if candidate is not None and candidate in known:
            ids.append(candidate)
        else:
            dropped.append(part.strip())
    return tuple(dict.fromkeys(ids)), tuple(dropped)


def _turns(conv: dict) -> tuple[list[Turn], list[tuple[int, int | None]]]:
    turns: list[Turn] = []
    sessions: list[tuple[int, int | None]] = []
    numbers = sorted(int(m[1]) for key in conv if (m := _SESSION.match(key)))
    for n in numbers:
        stamp = conv.get(f"session_{n}_date_time")
        start = parse_session_time(stamp) if isinstance(stamp, str) else None
        sessions.append((n, start))
        for raw in conv[f"session_{n}"]:
            turns.append(
                Turn(
                    id=raw["dia_id"],
                    session=n,
                    speaker=raw.get("speaker", ""),
                    text=raw.get("text", ""),
                    caption=raw.get("blip_caption") or None,
                    event_time=start,
                )
            )
    return turns, sessions


#: The conversations weights and thresholds may be chosen on; the other five are held out, so
#: that a gain is shown on conversations it was not chosen on (issue 4).
TUNE_SPLIT = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")


Selection = int | str | tuple[str, ...] | None


def parse_selection(text: str | None) -> Selection:
    """``--conversations``: a count ("3"), ids ("conv-26,conv-30"), ``tune`` or ``held-out``."""
    if text is None or not text.strip():
        return None
    value = text.strip()
    if value.isdigit():
        if int(value) < 1:
            raise BadArgument("--conversations must be at least 1")
        return int(value)
    if value in ("tune", "held-out"):
        return value  # resolved against the file's ids in load()
    return tuple(x.strip() for x in value.split(",") if x.strip())


def question_type(item: dict) -> str | None:
    """The LongMemEval question type of a conversation written in LoCoMo's format (one
    question, ``qa[0].question_type``); None for a LoCoMo conversation."""
    qa = item.get("qa")
    if isinstance(qa, list) and qa and isinstance(qa[0], dict):
        kind = qa[0].get("question_type")
        return kind if isinstance(kind, str) else None
    return None


def tune_half(items: list) -> set[str]:
    """The conversations weights may be chosen on. LoCoMo: :data:`TUNE_SPLIT`. A file whose
    conversations carry a LongMemEval question type: a fixed half of each type — the ids of a
    type ordered by their BLAKE2b digest, the first half (rounded up) — so the split depends on
    the ids alone, not on the file's order, and every type is on both sides."""
    ids = [str(item.get("sample_id", f"conv-{i}")) for i, item in enumerate(items)]
    kinds = [question_type(item) for item in items]
    if not any(kinds):
        return set(TUNE_SPLIT)
    by_kind: dict[str, list[str]] = {}
    for sid, kind in zip(ids, kinds, strict=True):
        by_kind.setdefault(kind or "", []).append(sid)
    tune: set[str] = set()
    for members in by_kind.values():
        ordered = sorted(members, key=lambda sid: hashlib.blake2b(sid.encode()).digest())
        tune.update(ordered[: (len(ordered) + 1) // 2])
    return tune


def _select(items: list, selection: Selection, path: Path) -> list:
    if selection is None:
        return items
    if isinstance(selection, int):
        return items[:selection]
    ids = [str(item.get("sample_id", f"conv-{i}")) for i, item in enumerate(items)]
    if selection == "tune":
        wanted = tune_half(items) & set(ids) if question_type(items[0]) else set(TUNE_SPLIT)
    elif selection == "held-out":
        wanted = set(ids) - tune_half(items)
    else:
        wanted = set(selection)
    unknown = sorted(wanted - set(ids)) if selection != "held-out" else []
    if unknown:
        raise BadArgument(f"{path} has no conversation {unknown[0]!r}; it has {', '.join(ids)}")
    return [item for item, sid in zip(items, ids, strict=True) if sid in wanted]


def load(path: Path, *, select: Selection = None) -> Dataset:
    """The conversations of a LoCoMo-format file: all, or a selection (:func:`parse_selection`)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadArgument(f"no benchmark file at {path}") from None
    except json.JSONDecodeError as exc:
        raise BadArgument(f"{path} is not JSON: {exc}") from None
    if not isinstance(raw, list):
        raise BadArgument(f"{path}: expected a list of conversations")
    conversations: list[Conversation] = []
    repairs: list[Repair] = []
    categories = categories_of(raw, path)  # the whole file's, whichever part is chosen
    chosen = _select(raw, select, path)
    for i, item in enumerate(chosen):
        sample = str(item.get("sample_id", f"conv-{i}"))
        try:
            turns, sessions = _turns(item["conversation"])
        except (KeyError, TypeError) as exc:
            raise BadArgument(f"{path}: conversation {sample} is malformed ({exc})") from None
        known = {t.id for t in turns}
        questions: list[Question] = []
        for qi, qa in enumerate(item.get("qa", [])):
            gold: list[str] = []
            for ev in qa.get("evidence", []):
                if isinstance(ev, str) and _TURN_ID.match(ev) and ev in known:
                    gold.append(ev)
                    continue
                ids, dropped = repair_evidence(str(ev), known)
                gold.extend(ids)
                repairs.append(Repair(sample, qi, str(ev), ids, dropped))
            kind = qa.get("question_type")
            questions.append(
                Question(sample, qi, str(qa.get("question", "")), int(qa.get("category", 0)),
                         tuple(dict.fromkeys(gold)), kind if isinstance(kind, str) else None,
                         _question_now(qa, sample, qi, path))
            )  # fmt: skip
        conversations.append(Conversation(sample, tuple(turns), tuple(sessions), tuple(questions)))
    return Dataset(str(path), tuple(conversations), tuple(repairs), categories)


def _question_now(qa: dict, sample: str, index: int, path: Path) -> int | None:
    if qa.get("question_date") in (None, ""):
        return None
    try:
        return parse_question_date(qa["question_date"])
    except BadDate as exc:
        raise BadDate(f"{path}: question {index} of {sample}: {exc}") from None

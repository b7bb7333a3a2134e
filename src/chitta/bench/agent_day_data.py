"""The agent-day benchmark's input: LongMemEval-S questions in LoCoMo's format, each with its
haystack cut into user–assistant pairs (what one Claude Code turn is), and which of them are
replayed (``--questions`` per type, ``--sessions`` and ``--pairs`` caps)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chitta.bench.locomo import parse_session_time
from chitta.errors import BadArgument, BadDate

_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True, slots=True)
class Pair:
    """One turn as Claude Code lives it: a user prompt, the assistant's reply, their turn ids."""

    prompt: str
    reply: str
    turns: tuple[str, ...]  # dia_ids, the user's first


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    start_ms: int
    pairs: tuple[Pair, ...]


@dataclass(frozen=True, slots=True)
class Question:
    """A question with its own haystack (the sessions replayed, in date order)."""

    id: str
    type: str
    text: str
    date_ms: int | None  # the question's "now"
    gold: tuple[str, ...]
    sessions: tuple[Session, ...]
    haystack_sessions: int  # sessions in the file before any cap


def parse_question_date(text: str) -> int | None:
    """LongMemEval's ``"2023/05/30 (Tue) 03:16"`` as ms since the epoch (UTC), else None."""
    try:
        moment = datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text.strip()), "%Y/%m/%d %H:%M")
    except ValueError:
        return None
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


def _pairs(raw: list[dict], gold: set[str], cap: int | None) -> tuple[Pair, ...]:
    pairs: list[Pair] = []
    for turn in raw:
        text, dia = str(turn.get("text", "")), str(turn.get("dia_id", ""))
        if turn.get("speaker") == "user":
            pairs.append(Pair(text, "", (dia,)))
        elif pairs:  # an assistant turn before any user turn has no prompt to answer
            last = pairs[-1]
            reply = f"{last.reply}\n{text}" if last.reply else text
            pairs[-1] = Pair(last.prompt, reply, (*last.turns, dia))
    if cap is None or len(pairs) <= cap:
        return tuple(pairs)
    # Keep every pair holding a gold turn, then the first others, in their order.
    keep = {i for i, p in enumerate(pairs) if gold & set(p.turns)}
    others = [i for i in range(len(pairs)) if i not in keep]
    keep |= set(others[: max(0, cap - len(keep))])
    return tuple(p for i, p in enumerate(pairs) if i in keep)


def _sessions(conv: dict, gold: set[str], cap: int | None, pairs: int | None,
              seed: str) -> tuple[tuple[Session, ...], int]:  # fmt: skip
    numbers = sorted(int(m[1]) for key in conv if (m := _SESSION.match(key)))
    evidence = {n for n in numbers if any(g.startswith(f"D{n}:") for g in gold)}
    chosen = list(numbers)
    if cap is not None and len(numbers) > cap:
        others = [n for n in numbers if n not in evidence]
        random.Random(seed).shuffle(others)  # a fixed draw per question, the same every run
        chosen = [*evidence, *others[: max(0, cap - len(evidence))]]
    sessions = []
    for n in chosen:
        try:
            start = parse_session_time(conv[f"session_{n}_date_time"])
        except (KeyError, BadDate):
            raise BadArgument(f"session {n} has no date in LoCoMo's form") from None
        sessions.append(Session(n, start, _pairs(conv[f"session_{n}"], gold, pairs)))
    return tuple(sorted(sessions, key=lambda s: (s.start_ms, s.number))), len(numbers)


def load_questions(path: Path, *, per_type: int | None, sessions: int | None,
                   pairs: int | None) -> list[Question]:  # fmt: skip
    """The first ``per_type`` questions of each type in ``path`` (all with None), each with
    its evidence sessions plus a seeded draw of the others up to ``sessions``, at most
    ``pairs`` pairs each (gold pairs always kept)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadArgument(f"no benchmark file at {path}") from None
    except json.JSONDecodeError as exc:
        raise BadArgument(f"{path} is not JSON: {exc}") from None
    taken: dict[str, int] = {}
    out: list[Question] = []
    for item in raw if isinstance(raw, list) else []:
        for qa in item.get("qa", [])[:1]:  # LongMemEval: one question per haystack
            qtype = str(qa.get("question_type") or qa.get("category", "?"))
            if per_type is not None and taken.get(qtype, 0) >= per_type:
                continue
            taken[qtype] = taken.get(qtype, 0) + 1
            sid = str(item.get("sample_id", f"q{len(out)}"))
            gold = tuple(str(e) for e in qa.get("evidence", []))
            try:
                chosen, total = _sessions(item["conversation"], set(gold), sessions, pairs, sid)
            except (KeyError, TypeError, BadArgument) as exc:
                raise BadArgument(f"{path}: question {sid} is malformed ({exc})") from None
            date = parse_question_date(str(qa.get("question_date", "")))
            out.append(Question(sid, qtype, str(qa.get("question", "")), date, gold, chosen,
                                total))  # fmt: skip
    if not out:
        raise BadArgument(f"{path} holds no question in LongMemEval's LoCoMo form")
    return out

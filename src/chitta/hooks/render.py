"""Merge the lanes' rows into context lines stated as facts, and one summary line of
diagnostics (for stderr, never for the model)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from chitta.code.notes import stale_note
from chitta.hooks.admission import GateView
from chitta.hooks.calls import Outcome
from chitta.hooks.lanes import Ask, Lane, Row

#: Every diagnostic line starts with this (stderr, or an error line of hooks/run.py).
TAG = "[chitta]"
#: (seconds, unit) from the largest: an age is said in the largest unit it has one of.
_UNITS = ((365 * 86400, "year"), (30 * 86400, "month"), (7 * 86400, "week"), (86400, "day"),
          (3600, "hour"), (60, "minute"))  # fmt: skip


def clip(text: str, chars: int) -> str:
    """``text`` on one line, at most ``chars`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def age(when: object, now_s: float | None = None) -> str:
    """How long ago the ISO 8601 time ``when`` was, in words ("3 days ago"); "" if unreadable."""
    try:
        then = datetime.fromisoformat(str(when).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""
    seconds = max(0.0, (time.time() if now_s is None else now_s) - then)
    for size, unit in _UNITS:
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "just now"


def _said_by(row: Row) -> str | None:
    role = (row.get("source") or {}).get("role")
    return {"user": "said by the user", "assistant": "the assistant's earlier answer"}.get(role)


def memory_line(
    row: Row,
    chars: int,
    realm: str | None = None,
    now_s: float | None = None,
    newer_known: bool = False,
) -> str:
    """``- <kind>, <who said it>, <age>, id <id>: <text>``, stated as facts; a correction
    names the keys the prompt named, a row of another realm than ``realm`` its realm, and a
    row a newer memory may have outdated (recall/updates.py) that memory, when the model
    sees it too (``newer_known``) or it is recorded as superseding this one; a row whose
    linked code changed, one short ``possibly stale`` note (code/notes.py)."""
    facts = [str(row.get("kind", "memory"))]
    if keys := row.get("keys"):
        facts.append(f"keys {', '.join(keys)}")
    if realm is not None and row.get("realm") not in (None, realm):
        facts.append(f"from realm {row.get('realm')}")
    if said := _said_by(row):
        facts.append(said)
    if when := age(row.get("event_time") or row.get("created_at"), now_s):
        facts.append(when)
    facts.append(f"id {row.get('id')}")
    if (newer := row.get("newer")) is not None:
        if newer == row.get("superseded_by"):
            facts.append(f"superseded by id {newer}")
        elif newer_known:
            facts.append(f"may be outdated by id {newer}")
    if stale := row.get("possibly_stale"):  # the code it names changed (code/stale.py)
        facts.append(stale_note(stale))
    return f"- {', '.join(facts)}: {clip(str(row.get('content', '')), chars)}"


def own_answer(row: Row, session: str | None) -> bool:
    """Whether ``row`` is the assistant's own recorded answer in agent session ``session``."""
    source = row.get("source") or {}
    return (
        session is not None
        and source.get("role") == "assistant"
        and source.get("session") == session
    )


@dataclass(slots=True)
class Merge:
    """The merged context: admitted lines, counts per lane and drops per cause."""

    lines: list[str] = field(default_factory=list)
    ids: list[tuple[str, str]] = field(default_factory=list)  # (lane, id) of each line
    admitted: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    lost: dict[str, list[str]] = field(default_factory=dict)  # cause -> lanes (timeout, error)
    debug: list[str] = field(default_factory=list)  # CHITTA_ADMIT_DEBUG lines


def merge(
    lanes: Sequence[Lane],
    outcomes: Sequence[Outcome],
    ask: Ask,
    chars: int,
    gate: GateView,
    shown: Collection[str] = (),
) -> Merge:
    """Admit each lane's rows in lane order, each memory once (the first lane wins), as far
    as ``gate`` lets them through (recall/confidence/gate.py), and none that the session was
    ``shown`` already or that is the session's own recorded answer; a lane with no call was
    skipped."""
    by_call = {o.name: o for o in outcomes}
    out = Merge()
    seen: set[str] = set()
    for lane in lanes:
        out.admitted[lane.name] += 0  # every lane appears in the summary, even with none
        outcome = by_call.get(lane.call)
        if outcome is None:  # not asked: a terse negation recalls nothing by topic
            continue
        if outcome.result is None:
            out.lost.setdefault(outcome.failure or "error", []).append(lane.name)
            continue
        for row in outcome.result.get(lane.part, []):
            if not lane.keep(row, ask):
                out.dropped[lane.reject] += 1
                continue
            verdict = gate.verdict(lane.name, row)
            out.debug.append(gate.debug_line(lane.name, row, verdict))
            if not verdict.admitted:
                out.dropped[verdict.reason] += 1
            elif row.get("id") in shown:
                out.dropped["shown"] += 1
            elif own_answer(row, ask.session):
                out.dropped["own-answer"] += 1
            elif row.get("id") in seen:
                out.dropped["duplicate"] += 1
            elif out.admitted[lane.name] >= lane.limit:
                out.dropped["over-limit"] += 1
            else:
                seen.add(row.get("id"))
                out.admitted[lane.name] += 1
                out.ids.append((lane.name, str(row.get("id"))))
                # A newer memory on the same subject is named if the model sees it too:
                # admitted before this row (it ranks above), or shown to the session before.
                newer = row.get("newer")
                known = newer is not None and (newer in seen or newer in shown)
                out.lines.append(memory_line(row, chars, ask.realm, ask.now_s, known))
    return out


def summary(m: Merge, realm: str, elapsed_ms: float, budget_ms: int) -> str:
    """One line: what each lane admitted, what was dropped by cause, the time spent."""
    admitted = ", ".join(f"{lane} {n}" for lane, n in m.admitted.items())
    causes = [f"{cause} {n}" for cause, n in sorted(m.dropped.items())]
    causes += [f"{cause} {len(ls)} ({', '.join(ls)})" for cause, ls in sorted(m.lost.items())]
    return (
        f"{TAG} realm {realm}: {sum(m.admitted.values())} memories admitted ({admitted}); "
        f"dropped: {', '.join(causes) or 'none'}; {elapsed_ms:.0f} ms of {budget_ms} ms"
    )

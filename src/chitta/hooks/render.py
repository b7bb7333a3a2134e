"""Merge the lanes' rows into context lines, one lane marker each, and one summary line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from chitta.hooks.admission import GateView
from chitta.hooks.calls import Outcome
from chitta.hooks.lanes import Ask, Lane, Row

#: Every hook line that is not a memory starts with this, so the model can tell them apart.
TAG = "[chitta]"


def clip(text: str, chars: int) -> str:
    """``text`` on one line, at most ``chars`` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def memory_line(lane: str, row: Row, chars: int) -> str:
    """``[lane] <id> <kind>: <text>``; a correction names its keys, a cross-realm row its realm."""
    label = row.get("kind", "memory")
    if keys := row.get("keys"):
        label += f" (key {', '.join(keys)})"
    if lane == "xr":
        label += f" @{row.get('realm')}"
    return f"[{lane}] {row.get('id')} {label}: {clip(str(row.get('content', '')), chars)}"


@dataclass(slots=True)
class Merge:
    """The merged context: admitted lines, counts per lane and drops per cause."""

    lines: list[str] = field(default_factory=list)
    admitted: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    lost: dict[str, list[str]] = field(default_factory=dict)  # cause -> lanes (timeout, error)
    debug: list[str] = field(default_factory=list)  # CHITTA_ADMIT_DEBUG lines


def merge(
    lanes: Sequence[Lane], outcomes: Sequence[Outcome], ask: Ask, chars: int, gate: GateView
) -> Merge:
    """Admit each lane's rows in lane order, each memory once (the first lane wins), as far
    as ``gate`` lets them through (recall/gate.py); a lane with no call was skipped."""
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
            elif row.get("id") in seen:
                out.dropped["duplicate"] += 1
            elif out.admitted[lane.name] >= lane.limit:
                out.dropped["over-limit"] += 1
            else:
                seen.add(row.get("id"))
                out.admitted[lane.name] += 1
                out.lines.append(memory_line(lane.name, row, chars))
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

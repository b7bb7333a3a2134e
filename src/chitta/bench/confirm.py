"""Confirmed failure codes (seed 002 §1.3): a recall trace compared with the known answer.

Inside a recall, the loop can only *suspect* a failure (the trace's ``suspected``); after the
fact, with the answer known, this tool *confirms* where each gold record was lost:

- ``CANDIDATE_MISS``: no arm (lane) found it;
- ``FILTER_DROP``: an arm found it, but a filter removed it — the store's (superseded,
  forgotten) or the admission gate's (the trace's ``gate.decisions``; chitta has no autocut);
- ``RANKING_MISS``: it passed, but was ranked below the count cut;
- ``RETURNED``: it was returned and admitted. Whether the answer then *used* it (the seed's
  evidence and reader codes) needs an answering model, which a retrieval harness does not run.

A question with several gold records takes the code of the earliest stage that lost one of
them (``CANDIDATE_MISS`` before ``FILTER_DROP`` before ``RANKING_MISS``), or ``RETURNED``
when none was lost. Pure functions over the trace v1 record (recall/trace.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CANDIDATE_MISS = "CANDIDATE_MISS"
FILTER_DROP = "FILTER_DROP"
RANKING_MISS = "RANKING_MISS"
RETURNED = "RETURNED"
#: Stage order: a question's code is the earliest failure among its gold records.
CODES = (CANDIDATE_MISS, FILTER_DROP, RANKING_MISS, RETURNED)


def confirm_ref(trace: Mapping[str, Any], ref: str) -> str:
    """Where ``ref`` (a gold record) was lost in the recall ``trace`` describes, if at all."""
    if not any(row["ref"] == ref for rows in trace["arms"].values() for row in rows):
        return CANDIDATE_MISS
    decisions = {d["ref"]: d for d in trace["gate"]["decisions"]}
    if ref in decisions and decisions[ref]["decision"] == "dropped":
        return FILTER_DROP
    if ref in trace["order"]["returned"]:
        return RETURNED
    return RANKING_MISS


def confirm(trace: Mapping[str, Any], gold: Sequence[str]) -> dict[str, Any]:
    """Each gold record's code, and the question's (the earliest failure, else RETURNED)."""
    per_gold = {ref: confirm_ref(trace, ref) for ref in gold}
    code = min(per_gold.values(), key=CODES.index) if per_gold else RETURNED
    return {"code": code, "gold": per_gold}


def distribution(rows: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """``(group, code)`` pairs counted per group and over all (``all``)."""
    out: dict[str, Counter[str]] = {}
    for group, code in rows:
        out.setdefault(group, Counter())[code] += 1
        out.setdefault("all", Counter())[code] += 1
    return {group: {code: counts.get(code, 0) for code in CODES} for group, counts in out.items()}

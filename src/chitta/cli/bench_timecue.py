"""``chitta bench timecue``: the time cue on LoCoMo, by the rule registered in
docs/benchmarks.md before the first run (bench/timecue.py)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    DATA_OPTION,
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import ChittaError

LIMIT = 10


@bench.command()
@DATA_OPTION
@out_option("timecue")
@APPEND_DOCS_OPTION
def timecue(**opts: Any) -> None:
    """The time cue on the LoCoMo questions whose text names a time: evidence up and down,
    and nDCG with the cue, without it, and with as many extra uncued rows; and the same for
    deliberately wrong cues."""
    try:
        _timecue(**opts)
    except ChittaError as exc:
        _fail(exc)


def _timecue(data: Path | None, out: Path, append_docs: Path | None) -> None:
    from rich.console import Console
    from rich.progress import Progress

    from chitta.bench import environment, locomo
    from chitta.bench import timecue as tc
    from chitta.bench.runner import realm_for
    from chitta.bench.systems.chitta import ChittaStore
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    started = time.time()
    dataset = locomo.load(data or environment.default_locomo())
    asked = [
        (c, q, cue)
        for c in dataset.conversations
        for q in c.questions
        if q.gold and (cue := tc.cue_for(q, c)) is not None
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="chitta-timecue-") as tmp:
        store = ChittaStore(Path(tmp) / "chitta", build_embedder(EmbedSettings()))
        try:
            with Progress(console=Console(stderr=True), transient=True) as progress:
                task = progress.add_task("recalling", total=len(asked))
                for conversation, question, cue in asked:
                    realm = realm_for(conversation.sample_id)
                    store.load(realm, conversation)
                    row = {
                        "conversation": question.conversation,
                        "question": question.index,
                        "category": question.category,
                        "confidence": cue.confidence,
                    }
                    for name, given in (("right", cue), ("wrong", tc.wrong_cue(cue, conversation))):
                        row[name] = _measure(store, realm, question, given)
                    rows.append(row)
                    progress.advance(task)
        finally:
            store.close()
    record = {
        **record_header("timecue", started),
        "limit": LIMIT,
        "questions": len(rows),
        "right": _summary([r["right"] for r in rows]),
        "wrong": _summary([r["wrong"] for r in rows]),
        "rows": rows,
    }
    write_results(record, out, markdown(record), append_docs)


def _measure(store: Any, realm: str, question: Any, cue: Any) -> dict[str, Any]:
    """One question under one cue: the three rankings' nDCG and the evidence's movement."""
    from chitta.bench import timecue as tc

    chitta = store.open()
    ask = {"realm": realm, "record": False}

    def turns(result: Any) -> list[str]:
        return [store.turn_of[h.memory.id] for h in result.hits]

    plain = turns(chitta.recall(question.question, limit=LIMIT, **ask))
    cued_result = chitta.recall(question.question, limit=LIMIT, time_cue=cue.as_time_cue(), **ask)
    seats = cued_result.cue.report.seats if cued_result.cue is not None else 0
    cued = turns(cued_result)
    extra = turns(chitta.recall(question.question, limit=LIMIT + seats, **ask)) if seats else plain
    gold = list(question.gold)
    return {
        "seats": seats,
        "movement": tc.movement(plain, cued, gold),
        "ndcg_plain": tc.ndcg_returned(plain, gold),
        "ndcg_cued": tc.ndcg_returned(cued, gold),
        "ndcg_extra": tc.ndcg_returned(extra, gold),
    }


def _summary(measures: list[dict[str, Any]]) -> dict[str, Any]:
    if not measures:
        return {"n": 0}
    mean = {
        k: round(statistics.mean(m[k] for m in measures), 4)
        for k in ("ndcg_plain", "ndcg_cued", "ndcg_extra")
    }
    up = sum(m["movement"] > 0 for m in measures)
    down = sum(m["movement"] < 0 for m in measures)
    carries = mean["ndcg_cued"] > max(mean["ndcg_plain"], mean["ndcg_extra"]) and up > down
    return {
        "n": len(measures),
        "up": up,
        "down": down,
        **mean,
        "seats_mean": round(statistics.mean(m["seats"] for m in measures), 3),
        "carries_beyond_extra_rows": carries,
    }


def markdown(record: dict[str, Any]) -> str:
    lines = [
        f"### Time cue run, {record['created_at'][:10]}",
        "",
        f"Command: `{record['command']}` (commit {str(record['commit'])[:12]}; "
        f"{record['questions']} questions, hybrid, limit {record['limit']})",
        "",
        "| cues | evidence up | down | nDCG no cue | nDCG with cue | nDCG no cue + as many rows "
        "| seats (mean) | carries beyond the extra rows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("right", "wrong"):
        s = record[name]
        if not s.get("n"):
            continue
        lines.append(
            f"| {name} | {s['up']} | {s['down']} | {s['ndcg_plain']:.3f} | {s['ndcg_cued']:.3f} "
            f"| {s['ndcg_extra']:.3f} | {s['seats_mean']} | "
            f"{'yes' if s['carries_beyond_extra_rows'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"

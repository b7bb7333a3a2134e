"""``chitta bench confirm``: confirmed failure codes per category, and what a trace costs."""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    DATA_OPTION,
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import BadArgument, ChittaError
from chitta.files import open_text


@bench.command()
@DATA_OPTION
@click.option("--conversations", help="A count, ids, tune or held-out (default: all).")
@click.option("--strategy", default="hybrid", show_default=True)
@click.option("--ablate", help="Lanes or stages to switch off, comma-separated.")
@click.option("--limit", type=int, default=10, show_default=True, help="The count cut.")
@click.option(
    "--save-traces",
    type=click.Path(path_type=Path),
    help="Also write every question's trace here (JSON Lines; large).",
)
@click.option(
    "--from-traces",
    type=click.Path(path_type=Path),
    help="Confirm the traces a --save-traces run wrote, instead of recalling.",
)
@out_option("confirm")
@APPEND_DOCS_OPTION
def confirm(**opts: Any) -> None:
    """Where each question's gold turns were lost (CANDIDATE_MISS, FILTER_DROP, RANKING_MISS),
    from recall traces, per category; and the time a requested trace adds to a recall."""
    try:
        _confirm(**opts)
    except ChittaError as exc:
        _fail(exc)


def _confirm(
    data: Path | None,
    conversations: str | None,
    strategy: str,
    ablate: str | None,
    limit: int,
    save_traces: Path | None,
    from_traces: Path | None,
    out: Path,
    append_docs: Path | None,
) -> None:
    from chitta.bench import confirm as cf
    from chitta.bench.locomo import CATEGORIES

    started = time.time()
    if from_traces is not None:
        rows, cost = _read_traces(from_traces), None
    else:
        rows, cost = _recall_all(data, conversations, strategy, ablate, limit, save_traces)
    for number, row in enumerate(rows, start=1):
        trace = row.pop("trace")
        if not row["gold_refs"]:  # no gold turn is in the store (refused on load): no code
            row.update({"code": "UNMAPPED", "gold": {}})
            continue
        try:
            row.update(cf.confirm(trace, row["gold_refs"]))
        except (KeyError, TypeError) as exc:
            raise BadArgument(f"trace {number} lacks the field {exc} of a trace v1") from None
    unmapped = sum(1 for r in rows if r["code"] == "UNMAPPED")
    rows = [r for r in rows if r["code"] != "UNMAPPED"]
    by_category = cf.distribution(
        (CATEGORIES.get(r["category"], str(r["category"])), r["code"]) for r in rows
    )
    record = _record(
        rows,
        by_category,
        cost,
        started,
        {
            "strategy": strategy,
            "ablate": ablate,
            "limit": limit,
            "conversations": conversations,
            "from_traces": str(from_traces or ""),
        },
    )
    # Questions none of whose gold turns is in the store (refused on load) get no code.
    record["unmapped_questions"] = unmapped
    write_results(record, out, markdown(record), append_docs)


def _recall_all(data, conversations, strategy, ablate, limit, save_traces):
    """Every question recalled twice, plain and traced (alternating which goes first)."""
    from rich.console import Console
    from rich.progress import Progress

    from chitta.bench import environment, locomo
    from chitta.bench.runner import realm_for
    from chitta.bench.systems.chitta import ChittaStore
    from chitta.config import EmbedSettings
    from chitta.embed.loader import build_embedder

    if not 1 <= limit <= 200:
        raise BadArgument(f"--limit must be between 1 and 200, got {limit}")
    lanes = [x.strip() for x in ablate.split(",") if x.strip()] if ablate else []
    dataset = locomo.load(
        data or environment.default_locomo(), select=locomo.parse_selection(conversations)
    )
    from chitta.wire import result_to_dict

    rows, plain_ms, traced_ms, build_ms, reply_ms = [], [], [], [], []
    try:
        saved = open_text(save_traces) if save_traces else None  # owner-only
    except OSError as exc:
        raise BadArgument(f"cannot write the traces to {save_traces}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="chitta-confirm-") as tmp:
        # The raw model, no query cache: the plain and the traced recall each embed.
        store = ChittaStore(Path(tmp) / "chitta", build_embedder(EmbedSettings()).inner)
        try:
            questions = [(c, q) for c in dataset.conversations for q in c.questions if q.gold]
            with Progress(console=Console(stderr=True), transient=True) as progress:
                task = progress.add_task("recalling", total=len(questions))
                for n, (conversation, question) in enumerate(questions):
                    realm = realm_for(conversation.sample_id)
                    store.load(realm, conversation)
                    chitta = store.open()
                    ask = {
                        "realm": realm,
                        "limit": limit,
                        "strategy": strategy,
                        "ablate": lanes,
                        "record": False,
                    }
                    timed = {}
                    for traced in (n % 2 == 1, n % 2 == 0):  # alternate which goes first
                        t = time.perf_counter()
                        result = chitta.recall(question.question, trace=traced, **ask)
                        timed[traced] = ((time.perf_counter() - t) * 1000, result)
                    plain_ms.append(timed[False][0])
                    traced_ms.append(timed[True][0])
                    trace = timed[True][1].trace
                    build_ms.append(trace["timing_ms"]["trace"])
                    # The reply a client receives: the trace also costs its serialisation.
                    sizes = {}
                    for traced in (False, True):
                        t = time.perf_counter()
                        json.dumps(result_to_dict(timed[traced][1]))
                        sizes[traced] = (time.perf_counter() - t) * 1000
                    reply_ms.append(sizes[True] - sizes[False])
                    memory_of = {turn: mid for mid, turn in store.turn_of.items()}
                    row = {
                        "conversation": question.conversation,
                        "question": question.index,
                        "category": question.category,
                        "gold": list(question.gold),
                        "gold_refs": [memory_of[g] for g in question.gold if g in memory_of],
                        "trace": trace,
                    }
                    if saved:
                        saved.write(json.dumps(row) + "\n")
                    rows.append(row)
                    progress.advance(task)
        finally:
            store.close()
            if saved:
                saved.close()
    cost = {
        "recall_ms_p50": round(statistics.median(plain_ms), 3),
        "traced_recall_ms_p50": round(statistics.median(traced_ms), 3),
        "trace_build_ms_p50": round(statistics.median(build_ms), 3),
        "added_ms_p50": round(
            statistics.median(t - p for t, p in zip(traced_ms, plain_ms, strict=True)), 3
        ),
        "n": len(plain_ms),
    }
    cost["reply_extra_ms_p50"] = round(statistics.median(reply_ms), 3)
    cost["share_of_recall"] = round(cost["trace_build_ms_p50"] / cost["recall_ms_p50"], 4)
    cost["share_with_reply"] = round(
        (cost["trace_build_ms_p50"] + cost["reply_extra_ms_p50"]) / cost["recall_ms_p50"], 4
    )
    return rows, cost


def _read_traces(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadArgument(f"cannot read the traces {path}: {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row.get("trace"), dict) or not isinstance(row.get("gold_refs"), list):
                raise ValueError("needs 'trace' and 'gold_refs'")
        except (ValueError, AttributeError) as exc:
            raise BadArgument(f"{path} line {number} is not a saved trace ({exc})") from None
        rows.append(row)
    if not rows:
        raise BadArgument(f"{path} holds no traces")
    return rows


def _record(rows, by_category, cost, started, settings) -> dict[str, Any]:

    return {
        **record_header("confirm", started),
        "settings": settings,
        "codes": by_category,
        "trace_cost": cost,
        "questions": [
            {k: r[k] for k in ("conversation", "question", "category", "code", "gold")}
            for r in rows
        ],
    }


def markdown(record: dict[str, Any]) -> str:
    """The failure-code table (and the trace's cost) for docs/benchmarks.md."""
    from chitta.bench.confirm import CODES

    lines = [
        f"### Confirmed failure codes, {record['created_at'][:10]}",
        "",
        f"Command: `{record['command']}` (commit {str(record['commit'])[:12]})",
        "",
        "| category | questions | " + " | ".join(CODES) + " |",
        "|---|---|" + "---|" * len(CODES),
    ]
    for group, counts in sorted(record["codes"].items(), key=lambda kv: kv[0] == "all"):
        total = sum(counts.values())
        cells = [f"{counts[c]} ({counts[c] / total:.0%})" for c in CODES]
        lines.append(f"| {group} | {total} | " + " | ".join(cells) + " |")
    cost = record.get("trace_cost")
    if cost:
        lines += [
            "",
            f"Trace cost ({cost['n']} questions): recall p50 {cost['recall_ms_p50']} ms, "
            f"traced {cost['traced_recall_ms_p50']} ms; building the trace p50 "
            f"{cost['trace_build_ms_p50']} ms = {cost['share_of_recall']:.1%} of the "
            f"recall, {cost['share_with_reply']:.1%} with the larger reply's JSON "
            f"(+{cost['reply_extra_ms_p50']} ms); paired difference p50 "
            f"{cost['added_ms_p50']} ms.",
        ]
    return "\n".join(lines) + "\n"

"""The agent-day figures from a replay's tally, and their Markdown table for the docs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chitta.bench.agent_day import Tally
from chitta.bench.score import percentile, summary_ms

#: Published figures of other systems, for scale only: their own setups, not measured here.
PUBLISHED = (
    "supermemory reports 95 % recall@15 at about 720 tokens per query on LongMemEval-S; "
    "Zep reports about 2k tokens per query on LoCoMo (their own published figures, "
    "different setups and metrics)"
)


def _pcts(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 1), "p95": round(percentile(values, 95), 1)}


def _group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "questions": n,
        "hit_rate": round(sum(r["hit"] for r in rows) / n, 3) if n else 0.0,
        "gold_stored_rate": round(sum(bool(r["gold_stored"]) for r in rows) / n, 3) if n else 0.0,
        "question_tokens": _pcts([r["question_tokens"] for r in rows]),
        "injections": sum(r["injections"] for r in rows),
        "repeats": sum(r["repeats"] for r in rows),
        "self_echo": sum(r["self_echo"] for r in rows),
        # Distilled fragments among the question's injected rows (docs/distill.md).
        "question_fragments": sum(r.get("question_fragments", 0) for r in rows),
    }


def figures(tally: Tally, size: dict[str, Any]) -> dict[str, Any]:
    """Per question type and overall: hit rate, tokens, repeats, self-echo; hook wall times."""
    types = sorted({r["type"] for r in tally.questions})
    return {
        "overall": {
            **_group(tally.questions),
            "prompt_tokens": _pcts(tally.prompt_tokens),
            "session_tokens": _pcts(tally.session_tokens),
            "session_start_tokens": _pcts(tally.start_tokens),
            "prompts": len(tally.prompt_tokens),
            "sessions": len(tally.session_tokens),
            "stop_hooks_without_id": tally.unrecorded,
        },
        "per_type": {t: _group([r for r in tally.questions if r["type"] == t]) for t in types},
        "hook_wall_ms": {
            name: {**summary_ms(ms), "runs": len(ms)} for name, ms in sorted(tally.hook_ms.items())
        },  # fmt: skip
        "store": size,
        "questions": tally.questions,
    }


def _row(name: str, g: dict[str, Any]) -> str:
    t = g["question_tokens"]
    return (f"| {name} | {g['questions']} | {g['hit_rate']:.2f} | {g['gold_stored_rate']:.2f} | "
            f"{t['p50']:.0f} / {t['p95']:.0f} | {g['repeats']} / {g['injections']} | "
            f"{g['self_echo']} |")  # fmt: skip


def markdown(record: dict[str, Any]) -> str:
    """The run's heading line, the table per question type, and the run-wide figures."""
    s, o = record["settings"], record["overall"]
    load = record["machine"]["loadavg"]
    hooks = "; ".join(f"`{n}` {h['p50']:.0f} / {h['p95']:.0f} ms ({h['runs']} runs)"
                      for n, h in record["hook_wall_ms"].items())  # fmt: skip
    store = record["store"]
    lines = [
        f"`{record['command']}` at commit `{(record['commit'] or 'unknown')[:12]}`: "
        f"{o['questions']} questions ({s['questions_per_type']} per type), at most "
        f"{s['sessions_cap']} sessions each (evidence sessions always kept), "
        f"{s['pairs_cap'] or 'all'} turns per session; {o['sessions']} sessions, "
        f"{o['prompts']} prompts; {record['wall_s']} s; load average "
        f"{' / '.join(f'{x:.2f}' for x in load) if load else 'unknown'} at the end.",
        "",
        "| question type | questions | hit rate | gold stored | question context tokens "
        "p50 / p95 | repeats / injections | self-echo |",
        "|---|---|---|---|---|---|---|",
        *[_row(t, g) for t, g in record["per_type"].items()],
        _row("**overall**", o),
        "",
        f"Tokens (characters / 4) injected per prompt p50 / p95: {o['prompt_tokens']['p50']:.0f}"
        f" / {o['prompt_tokens']['p95']:.0f}; per session (session-start and every prompt): "
        f"{o['session_tokens']['p50']:.0f} / {o['session_tokens']['p95']:.0f}; by session-start"
        f" alone {o['session_start_tokens']['p50']:.0f} / {o['session_start_tokens']['p95']:.0f}."
        f" Hook wall time p50 / p95, spawn to exit: {hooks}. Store at the end: "
        f"{store['memories']:,} memories, {store['bytes'] / 1e6:.1f} MB.",
        "",
        f"For scale only: {PUBLISHED}.",
        "",
    ]
    return "\n".join(lines)

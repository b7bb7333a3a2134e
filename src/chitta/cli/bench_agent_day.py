"""``chitta bench agent-day``: LongMemEval-S replayed through the real hooks and a daemon."""

from __future__ import annotations

import time
from pathlib import Path

import click

from chitta.cli.bench import (
    APPEND_DOCS_OPTION,
    _fail,
    bench,
    out_option,
    record_header,
    write_results,
)
from chitta.errors import ChittaError

#: What --smoke runs: one question, two sessions of two turns (seconds, for the test).
SMOKE = {"per_type": 1, "sessions": 2, "pairs": 2, "types": 1}


@bench.command(name="agent-day")
@click.option("--data", type=click.Path(path_type=Path),
              help="LongMemEval in LoCoMo's format (default: "
                   "../shared/data/longmemeval_s_dev60.json).")  # fmt: skip
@click.option("--questions", "per_type", type=click.IntRange(min=1), default=3,
              show_default=True,
              help="Questions per question type (the file's first).")  # fmt: skip
@click.option(
    "--sessions",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Haystack sessions per question: the evidence ones, then a seeded draw.",
)
@click.option(
    "--pairs",
    type=click.IntRange(min=1),
    help="Turns (prompt + reply) per session; gold turns kept (default: all).",
)
@click.option("--smoke", is_flag=True, help="One question, two sessions of two turns.")
@click.option(
    "--distill/--no-distill",
    default=True,
    show_default=True,
    help="Whether the daemon distills the turns it records (docs/distill.md).",
)
@click.option("--workdir", type=click.Path(path_type=Path),
              help="An empty folder for the home and transcripts, kept afterwards "
                   "(default: a temporary one, removed).")  # fmt: skip
@out_option("agent-day")
@APPEND_DOCS_OPTION
def agent_day(data: Path | None, per_type: int, sessions: int, pairs: int | None, smoke: bool,
              distill: bool, workdir: Path | None, out: Path,
              append_docs: Path | None) -> None:  # fmt: skip
    """Each question's haystack as Claude Code sessions through `chitta hook session-start`,
    `prompt` and `stop` on a new daemon, then the question as a new session's prompt: the
    share whose context holds a gold turn, tokens, repeats, self-echo, hook times."""
    from rich.console import Console

    from chitta.bench import agent_day as ad
    from chitta.bench import agent_day_report as report
    from chitta.bench import environment
    from chitta.bench.agent_day_data import load_questions

    console = Console(stderr=True)
    started = time.time()
    path = data or environment.default_longmemeval()
    if smoke:
        per_type, sessions, pairs = SMOKE["per_type"], SMOKE["sessions"], SMOKE["pairs"]
    try:
        questions = load_questions(path, per_type=per_type, sessions=sessions, pairs=pairs)
        if smoke:
            questions = questions[: SMOKE["types"]]
        console.print(f"{len(questions)} questions, {ad.session_count(questions)} sessions, "
                      f"{ad.hook_count(questions)} hook runs", markup=False)  # fmt: skip
        tally, size = ad.run(questions, workdir=workdir, distill=distill,
                             tick=lambda line: console.print(line, markup=False))  # fmt: skip
    except ChittaError as exc:
        _fail(exc)
        return
    record = {
        **record_header("agent-day", started),
        "settings": {"data": path.name, "questions_per_type": per_type, "sessions_cap": sessions,
                     "pairs_cap": pairs, "smoke": smoke, "distill": distill,
                     "realm": "lme-<question id>",
                     "question_ids": [q.id for q in questions], "clock": ad.CLOCK_NOTE},
        **report.figures(tally, size),
    }  # fmt: skip
    write_results(record, out, report.markdown(record), append_docs)

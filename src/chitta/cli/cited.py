"""``chitta cited-recall``: one answer with numbered citations, or an abstention (seed 003).

The answer comes from the daemon's ``cited_recall`` method when a daemon serves the store,
else from the store opened here (cited/service.py either way); the JSON and the HTML report
are made here from the answer, so both paths print the same. docs/cited-recall.md says more.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import click

from chitta.errors import BadArgument, BadConfig

if TYPE_CHECKING:
    from chitta.cited.base import CitedAnswer
    from chitta.config import Settings

#: Where ``--html`` writes without ``--output`` (seed 003), in the current folder.
DEFAULT_HTML = "cited_recall_output.html"
#: How long the CLI waits for the daemon's reply. The daemon answers by its own deadline
#: (``chitta serve --deadline``, 30 s by default) at the latest, so this only guards against
#: a daemon that hangs; it is long so that a raised deadline is not cut short here.
DAEMON_WAIT_S = 600.0


@click.command(name="cited-recall")
@click.option("--query", "-q", required=True, help="The question to answer.")
@click.option(
    "--limit",
    "-l",
    type=int,
    help="Passages asked of each source, 1-100 (default: cited.toml's limit, 5).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON (the default).")
@click.option(
    "--html",
    "as_html",
    is_flag=True,
    help=f"Write a self-contained HTML report (to --output, default ./{DEFAULT_HTML}).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="File to write (default: stdout for JSON, ./cited_recall_output.html for HTML).",
)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The sources and rules, a cited.toml (default: $CHITTA_HOME/cited.toml; without "
    "one, this store's default realm alone).",
)
@click.pass_context
def cited_recall(
    ctx: click.Context,
    query: str,
    limit: int | None,
    as_json: bool,
    as_html: bool,
    output: Path | None,
    config: Path | None,
) -> None:
    """Answer a question from several memory sources with numbered citations, or abstain
    and say why (still listing what was found).

    The sources (this store, Markdown notes, SQLite FTS5 tables, HTTP search endpoints) and
    the model that writes the answer come from cited.toml (docs/cited-recall.md). Without a
    model the answer quotes the best-matching sentences of the top citations. An abstention
    is an answer: the exit code is 0.
    """
    from chitta.cli.common import errors as _errors

    if as_json and as_html:
        raise click.UsageError("--json and --html are mutually exclusive; give one of them")
    with _errors(as_json):
        if config is not None:
            config = config.expanduser().absolute()  # the daemon's folder is not ours
            if not config.is_file():
                raise BadConfig(f"no cited recall settings file at {config}")
        answer = _answer(ctx, query, limit, config)
        if as_html:
            from chitta.cited.html import render_html

            path = output if output is not None else Path(DEFAULT_HTML)
            _write(path, render_html(answer))
            click.echo(f"wrote {path.absolute()} ({_summary(answer)})")
        elif output is not None:
            _write(output, _json(answer) + "\n")
            click.echo(f"wrote {output.absolute()} ({_summary(answer)})")
        else:
            click.echo(_json(answer))


def _answer(ctx: click.Context, query: str, limit: int | None, config: Path | None) -> CitedAnswer:
    """The answer from the daemon serving the store, or from the store opened here."""
    from chitta.cited.base import CitedAnswer
    from chitta.cli.common import settings_of as _settings
    from chitta.daemon.client import DaemonClient, daemon_answers

    settings = _settings(ctx)
    if daemon_answers(settings.socket_path):
        with DaemonClient(settings.socket_path, timeout_s=DAEMON_WAIT_S) as client:
            params = {"query": query, "limit": limit, "config": config and str(config)}
            reply = client.call(
                "cited_recall", **{k: v for k, v in params.items() if v is not None}
            )
        return CitedAnswer.from_dict(reply)
    return _in_process(ctx, settings, query, limit, config)


def _in_process(
    ctx: click.Context, settings: Settings, query: str, limit: int | None, config: Path | None
) -> CitedAnswer:
    """The answer with the store opened here — only when a source is this store: a setup of
    Markdown files and FTS5 tables needs neither the store nor the model."""
    from chitta.cited.config import load_cited_settings
    from chitta.cited.service import answer
    from chitta.cli.common import open_store as _open

    cited = load_cited_settings(config, settings.home)
    if not any(source.kind == "chitta" for source in cited.sources):
        return answer(None, settings.home, query, limit=limit, config=config,
                      embed=settings.embed)  # fmt: skip
    with _open(ctx, create=False) as chitta:
        return answer(chitta, settings.home, query, limit=limit, config=config)


def _json(answer: CitedAnswer) -> str:
    return json.dumps(answer.as_dict(), ensure_ascii=False, indent=2)


def _summary(answer: CitedAnswer) -> str:
    cited = f"{len(answer.citations)} citation{'s' if len(answer.citations) != 1 else ''}"
    if answer.abstained:
        return f"abstained: {answer.abstention_reason}; {cited}"
    return f"answered ({answer.answer_mode}) with {cited}"


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path``, owner-only: the report quotes memories."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            # The mode above applies to a new file only; an older report may be readable by
            # all. (Not a device or a pipe: "-o /dev/stdout" keeps its terminal's mode.)
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fchmod(fd, 0o600)
            fh.write(text)
    except OSError as exc:
        raise BadArgument(f"cannot write {path}: {exc.strerror or exc}") from None

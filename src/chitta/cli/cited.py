"""``chitta cited-recall``: one answer with numbered citations, or an abstention (seed 003).

The answer comes from the daemon's ``cited_recall`` method when a daemon serves the store,
else from the store opened here (cited/service.py either way); the JSON and the HTML report
are made here from the answer, so both paths print the same. docs/cited-recall.md says more.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from chitta.cli.ops import fill_realm
from chitta.errors import BadArgument, BadConfig
from chitta.files import write_text_private
from chitta.ops import OPERATIONS, check_params, given

if TYPE_CHECKING:
    from chitta.cited.base import CitedAnswer

#: Where ``--html`` writes without ``--output`` (seed 003), in the current folder.
DEFAULT_HTML = "cited_recall_output.html"


@click.command(name="cited-recall")
@click.argument("question", required=False, metavar="QUERY")
@click.option("--query", "-q", hidden=True, help="QUERY, the older way (an option).")
@click.option("--limit", "-n", "-l", type=int,
              help="Passages asked of each source, 1-100 (default: cited.toml's, 5).")  # fmt: skip
@click.option("--realm", "-r", "realms", multiple=True,
              help="A realm of this store to search (repeat for several; default: the "
              "workspace's); the sources file can name others.")  # fmt: skip
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
    "one, this store's realm alone).",
)
@click.pass_context
def cited_recall(
    ctx: click.Context,
    question: str | None,
    query: str | None,
    limit: int | None,
    realms: tuple[str, ...],
    as_json: bool,
    as_html: bool,
    output: Path | None,
    config: Path | None,
) -> None:
    """Answer QUERY from several memory sources with numbered citations, or abstain
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
        if (question is None) == (query is None):
            raise BadArgument("give the question once: as QUERY (or the older -q QUERY)")
        if config is not None:
            config = config.expanduser().absolute()  # the daemon's folder is not ours
            if not config.is_file():
                raise BadConfig(f"no cited recall settings file at {config}")
        params = fill_realm(ctx, OPERATIONS["cited_recall"], {
            "query": question if question is not None else query, "limit": limit,
            "realms": [x.strip() for r in realms for x in r.split(",") if x.strip()] or None,
            "config": config and str(config),
        })  # fmt: skip
        check_params(OPERATIONS["cited_recall"], given(params))
        answer = _answer(ctx, given(params))
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


def _answer(ctx: click.Context, params: dict[str, Any]) -> CitedAnswer:
    """The answer from the daemon serving the store, or from the store opened here."""
    from chitta.cited.base import CitedAnswer
    from chitta.cli.common import daemon_client

    client = daemon_client(ctx)
    if client is not None:
        with client:
            return CitedAnswer.from_dict(client.call("cited_recall", **params))
    return _in_process(ctx, params)


def _in_process(ctx: click.Context, params: dict[str, Any]) -> CitedAnswer:
    """The answer with the store opened here — only when a source is this store: a setup of
    Markdown files and FTS5 tables needs neither the store nor the model."""
    from chitta.cited.config import load_cited_settings
    from chitta.cited.service import answer
    from chitta.cli.common import open_store, settings_of

    settings = settings_of(ctx)
    config = Path(params["config"]) if params.get("config") else None
    options = {"limit": params.get("limit"), "config": config, "realms": params.get("realms")}
    cited = load_cited_settings(config, settings.home)
    if not any(source.kind == "chitta" for source in cited.sources):
        return answer(None, settings.home, params["query"], embed=settings.embed, **options)
    with open_store(ctx, create=False) as chitta:
        return answer(chitta, settings.home, params["query"], **options)


def register(group: click.Group) -> None:
    """Add ``cited-recall`` to ``group``."""
    group.add_command(cited_recall)


def _json(answer: CitedAnswer) -> str:
    # "ok" first, as in every JSON reply; then the seed's shape (docs/cited-recall.md).
    return json.dumps({"ok": True, **answer.as_dict()}, ensure_ascii=False, indent=2)


def _summary(answer: CitedAnswer) -> str:
    cited = f"{len(answer.citations)} citation{'s' if len(answer.citations) != 1 else ''}"
    if answer.abstained:
        return f"abstained: {answer.abstention_reason}; {cited}"
    return f"answered ({answer.answer_mode}) with {cited}"


def _write(path: Path, text: str) -> None:
    """Write ``text`` as the whole of ``path``, owner-only (the report quotes memories); a
    full disk is a WriteFailed naming the file, with no half report left (chitta/files.py)."""
    write_text_private(path, text)

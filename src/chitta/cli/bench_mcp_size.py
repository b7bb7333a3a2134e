"""``chitta bench mcp-size``: the characters chitta's MCP tools add to a client's context."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import anyio
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
from chitta.errors import ChittaError


@bench.command("mcp-size")
@DATA_OPTION
@click.option("--conversation", default="conv-26", show_default=True,
              help="The LoCoMo conversation whose turns fill the store.")  # fmt: skip
@click.option("--questions", type=int, default=10, show_default=True,
              help="How many of its questions are asked (the first N).")  # fmt: skip
@click.option("--limit", type=int, default=10, show_default=True, help="recall's limit.")
@out_option("mcp-size")
@APPEND_DOCS_OPTION
def mcp_size(data: Path | None, conversation: str, questions: int, limit: int, out: Path,
             append_docs: Path | None) -> None:  # fmt: skip
    """The tool definitions `chitta mcp` lists and its `recall` replies on LoCoMo, in
    characters (and chars/4 as tokens), through the real server and the SDK's client."""
    from rich.console import Console

    from chitta.bench import environment
    from chitta.bench import mcp_size as size

    console = Console(stderr=True)
    started = time.time()
    path = data or environment.default_locomo()
    try:
        with tempfile.TemporaryDirectory(prefix="chitta-bench-mcp-") as tmp:
            home = Path(tmp) / "home"
            console.print("importing", conversation, markup=False, highlight=False)
            store = size.build_store(home, path, conversation, Path(tmp))
            asked = store["questions"][:questions]
            console.print(f"asking {len(asked)} questions", markup=False, highlight=False)
            try:
                figures = anyio.run(
                    lambda: size.measure(home, asked, realm=size.REALM, limit=limit)
                )
            finally:
                size.stop_daemon(home)
    except ChittaError as exc:
        _fail(exc)
        return
    record = {
        **record_header("mcp-size", started),
        "settings": {"data": path.name, "conversation": store["sample_id"], "limit": limit,
                     "memories": store["memories"], "questions": len(asked)},
        "summary": size.summary(figures),
        "figures": figures,
    }  # fmt: skip
    write_results(record, out, size.markdown(record), append_docs)

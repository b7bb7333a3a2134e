"""The ``cited_recall`` operation: one answer with numbered citations, or an abstention."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.cited.settings import MAX_LIMIT
from chitta.ops.common import file_path
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import MAX_PATH_CHARS, MAX_QUERY_CHARS, MAX_SCOPE_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta


def _cited_recall(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.cited.service import answer

    config = None if p.get("config") is None else file_path(ctx, p["config"], "config")
    realms = p.get("realms") or ([p["realm"]] if p.get("realm") else None)
    done = answer(chitta, ctx.home, p["query"], limit=p.get("limit"), config=config,
                  realms=realms)  # fmt: skip
    return done.as_dict()


CITED_RECALL = Operation(
    "cited_recall",
    "Answer QUERY from several memory sources with numbered citations, or abstain and say "
    "why (still listing what was found).",
    (
        Param(
            "query",
            "text",
            "The question, in plain words.",
            required=True,
            positional=True,
            max_length=MAX_QUERY_CHARS,
        ),
        Param(
            "limit",
            "int",
            "Passages per source (default: cited.toml's, 5).",
            minimum=1,
            maximum=MAX_LIMIT,
            short="-n",
        ),
        Param(
            "realm",
            "text",
            "Realm; default: the workspace's.",
            cli=False,
            realm=True,
            max_length=MAX_SCOPE_CHARS,
        ),
        Param(
            "realms",
            "list",
            "Realms of this store to search (default: the workspace's); "
            "the sources file can name others.",
            flag="--realm",
            short="-r",
            realm=True,
            mcp=False,
            max_length=MAX_SCOPE_CHARS,
            max_items=32,
        ),
        Param(
            "config",
            "text",
            "The sources and rules, a cited.toml (default: "
            "$CHITTA_HOME/cited.toml). An absolute path through the daemon.",
            mcp=False,
            max_length=MAX_PATH_CHARS,
        ),
    ),  # fmt: skip
    _cited_recall,
    mcp="One answer with numbered citations, or abstained; sources from cited.toml.",
)

OPERATIONS = (CITED_RECALL,)

"""Operations on triplets and entity aliases, and recall_analogy (relations/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.ops.common import DATE_HELP, REALM
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.relations.names import MAX_ENTITY_CHARS, MAX_PREDICATE_CHARS
from chitta.validate import MAX_ID_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta

PREDICATE_HELP = "e.g. imports, lives_in, or your own."
PREDICATE_CLI_HELP = (
    "calls, contains, imports, inherits, corrects, relates_to, or one of your own; case, "
    "spaces and hyphens do not matter (Lives In = lives_in)."
)
ENTITY = "Entity name, any case."
NAME = {"max_length": MAX_ENTITY_CHARS}
ID = {"max_length": MAX_ID_CHARS}


def _add(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.relations.service import triplet_to_dict

    done = chitta.relations.add(
        p["subject"], p["predicate"], p["object"], weight=p.get("weight", 1.0),
        valid_from=p.get("valid_from"), source_memory=p.get("source_memory"),
        realm=p.get("realm"),
    )  # fmt: skip
    return {"existing": done.existing, "triplet": triplet_to_dict(done.triplet)}


def _invalidate(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.relations.service import triplet_to_dict

    done = chitta.relations.invalidate(p["id"], p.get("at"))
    return {"already": done.already, "triplet": triplet_to_dict(done.triplet)}


def _find(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.relations.service import triplet_to_dict

    found = chitta.relations.find(
        subject=p.get("subject"), predicate=p.get("predicate"), object_=p.get("object"),
        realm=p.get("realm"), as_of=p.get("as_of"),
        include_invalidated=p.get("include_invalidated", False), limit=p.get("limit", 100),
    )  # fmt: skip
    return {"triplets": [triplet_to_dict(t) for t in found]}


def _alias(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    alias_key, canonical_key = chitta.relations.alias(p["alias"], p["canonical"], p.get("realm"))
    return {"alias_key": alias_key, "canonical_key": canonical_key}


def _unalias(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    return {"alias": p["alias"], "removed": chitta.relations.unalias(p["alias"], p.get("realm"))}


def _aliases(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    return {"aliases": chitta.relations.aliases(p.get("realm"))}


def _analogy(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    found = chitta.recall_analogy(p["a"], p["b"], p["c"], realm=p.get("realm"),
                                  as_of=p.get("as_of"), limit=p.get("limit", 10))  # fmt: skip
    return found.as_dict()


ADD = Operation(
    "add_triplet",
    "Store the edge SUBJECT -[PREDICATE]-> OBJECT and print its id (an equal current edge "
    "is not stored twice).",
    (
        Param("subject", "text", ENTITY, required=True, positional=True, **NAME),
        Param(
            "predicate",
            "text",
            PREDICATE_HELP,
            required=True,
            positional=True,
            cli_help=PREDICATE_CLI_HELP,
            max_length=MAX_PREDICATE_CHARS,
        ),
        Param("object", "text", ENTITY, required=True, positional=True, **NAME),
        Param(
            "weight",
            "number",
            "How strongly it holds, in (0, 1].",
            default=1,
            minimum=0,
            maximum=1,
            short="-w",
            mcp=False,
        ),
        Param(
            "valid_from",
            "when",
            "Since when it holds (ISO 8601).",
            cli_help=f"When the edge began to hold (default now); {DATE_HELP}.",
        ),
        Param("source_memory", "text", "Id of the memory stating it.", **ID),
        REALM,
    ),  # fmt: skip
    _add,
    writes=True,
    creates=True,
    effect="idempotent",
    mcp="Store a fact as an edge subject -predicate-> object (auth.py imports jwt), once.",
)
# Not MCP tools: curating edges is a person's or a script's work, and every tool's definition
# goes with each request an agent makes (docs/mcp.md, "What the tools cost").
INVALIDATE = Operation(
    "invalidate_triplet",
    "Mark the edge ID as no longer holding; it is kept for as_of questions.",
    (
        Param(
            "id",
            "text",
            "The edge's id (from add_triplet or find_triplets).",
            required=True,
            positional=True,
            **ID,
        ),
        Param(
            "at",
            "when",
            "When it stopped holding (ISO 8601; default now).",
            cli_help=f"When the edge stopped holding (default now); {DATE_HELP}.",
        ),
    ),  # fmt: skip
    _invalidate,
    writes=True,
    effect="idempotent",
)
FIND = Operation(
    "find_triplets",
    "List the edges that hold now (or at --as-of), newest first.",
    (
        Param(
            "subject", "text", "Only edges from this entity (or its aliases).", short="-s", **NAME
        ),
        Param(
            "predicate",
            "text",
            "Only edges over this predicate.",
            short="-p",
            max_length=MAX_PREDICATE_CHARS,
        ),
        Param("object", "text", "Only edges to this entity (or its aliases).", short="-o", **NAME),
        REALM,
        Param(
            "as_of",
            "when",
            "The edges that held then (ISO 8601; default now).",
            cli_help=f"The edges that held at this time (default now); {DATE_HELP}.",
        ),
        Param(
            "include_invalidated",
            "flag",
            "Invalidated edges too (not with as_of).",
            default=False,
            flag="--all",
        ),
        Param(
            "limit",
            "int",
            "At most this many edges.",
            default=100,
            minimum=1,
            maximum=1000,
            short="-n",
        ),
    ),  # fmt: skip
    _find,
)
ALIAS = Operation(
    "alias_entity",
    "Make ALIAS name the same entity as CANONICAL (edges under either answer for both).",
    (
        Param("alias", "text", "Another name, e.g. NYC.", required=True, positional=True, **NAME),
        Param(
            "canonical",
            "text",
            "The entity it names, e.g. New York.",
            required=True,
            positional=True,
            **NAME,
        ),
        REALM,
    ),  # fmt: skip
    _alias,
    writes=True,
    creates=True,
    effect="idempotent",
)
UNALIAS = Operation(
    "remove_alias",
    "Forget the alias ALIAS; edges stored under it stay, under its own name.",
    (Param("alias", "text", "The alias to forget.", required=True, positional=True, **NAME), REALM),
    _unalias,
    writes=True,
)
ALIASES = Operation(
    "list_aliases",
    "List the realm's aliases: each alias key and the entity key it names.",
    (REALM,),
    _aliases,
)
ANALOGY = Operation(
    "recall_analogy",
    "A is to B as C is to what? Answered from the stored triplets only, or an abstention "
    "that says which part is missing.",
    (
        Param("a", "text", ENTITY, required=True, positional=True, **NAME),
        Param("b", "text", ENTITY, required=True, positional=True, **NAME),
        Param("c", "text", ENTITY, required=True, positional=True, **NAME),
        REALM,
        Param(
            "as_of",
            "when",
            "Over the edges that held then (ISO 8601).",
            cli_help=f"Answer over the edges that held then; {DATE_HELP}.",
        ),
        Param(
            "limit",
            "int",
            "At most this many answers.",
            default=10,
            minimum=1,
            maximum=100,
            short="-n",
            mcp=False,
        ),
    ),  # fmt: skip
    _analogy,
    detail="The predicates of the edges from A to B are followed from C; each answer shows "
    "the A->B and C->D edges behind it. When A and B are not related, or C has no edge over "
    "those predicates, the command abstains and says which (exit code 0: that is an answer "
    "too).",
    mcp="a is to b as c is to what? From the stored edges, or it abstains (reason_code).",
)

OPERATIONS = (ADD, INVALIDATE, FIND, ALIAS, UNALIAS, ALIASES, ANALOGY)

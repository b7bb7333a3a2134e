"""Operations on memories: remember, recall, reconstruct, show, and the lifecycle changes."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chitta.config import MAX_CONTENT_CHARS
from chitta.errors import BadArgument, ContentTooLong
from chitta.ops.common import (
    AGENT,
    CHANNEL,
    DATE_HELP,
    LIMIT,
    MEMORY_ID,
    QUERY,
    REALM,
    SESSION,
    STRATEGY,
    TIME_CUE,
    TRACE,
    VERBOSE,
)
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.recall.config import FUSIONS, KNOWN_LANES, KNOWN_STAGES
from chitta.recall.reconstruct import DEFAULT_BUDGET
from chitta.store.kinds import Kind
from chitta.store.records import SOURCE_ROLES
from chitta.validate import (
    MAX_ID_CHARS,
    MAX_PATH_CHARS,
    MAX_SESSION_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_WORD_CHARS,
)

if TYPE_CHECKING:
    from chitta.api import Chitta

KINDS = tuple(k.value for k in Kind)
KINDS_HELP = ", ".join(KINDS)


def _remember(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.store.records import Source
    from chitta.wire import remembered_to_dict

    source = Source(session=p.get("session"), file=p.get("file"), url=p.get("url"),
                    role=p.get("role"))  # fmt: skip
    done = chitta.remember(
        p["content"], kind=p.get("kind"), realm=p.get("realm"), agent_id=p.get("agent_id"),
        channel=p.get("channel"), tags=p.get("tags"), source=source,
        event_time=p.get("event_time"), supersedes=p.get("supersedes"),
        confidence=p.get("confidence"),
    )  # fmt: skip
    return remembered_to_dict(done)


def _recall(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.wire import result_to_dict

    result = chitta.recall(
        p["query"], realm=p.get("realm"), agent_id=p.get("agent_id"), channel=p.get("channel"),
        limit=p.get("limit", 10), strategy=p.get("strategy", "hybrid"),
        ablate=p.get("ablate") or [], include_superseded=p.get("include_superseded", False),
        fusion=p.get("fusion"), cross_realm=p.get("cross_realm", False),
        disable_hdc=p.get("disable_hdc", False), session=p.get("session"),
        rerank=p.get("rerank", True), trace=p.get("trace", False), time_cue=p.get("time_cue"),
        record=p.get("record", True), now=p.get("now"), as_of_commit=p.get("as_of_commit"),
    )  # fmt: skip
    return result_to_dict(result)


def _reconstruct(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.wire import reconstruction_to_dict

    rec = chitta.reconstruct(
        p["query"], realm=p.get("realm"), agent_id=p.get("agent_id"), channel=p.get("channel"),
        limit=p.get("limit", 10), budget=p.get("budget", DEFAULT_BUDGET),
        strategy=p.get("strategy", "hybrid"), session=p.get("session"),
        trace=p.get("trace", False), time_cue=p.get("time_cue"), now=p.get("now"),
    )  # fmt: skip
    return reconstruction_to_dict(rec)


def _get(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.wire import memory_reply

    return {"memory": memory_reply(chitta.get(p["id"], include_deleted=True))}


def _edit(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.wire import memory_reply

    if p.get("kind") is None and p.get("tags") is None:
        raise BadArgument("edit_memory changes the kind or the tags: give --kind or --tags")
    return {"memory": memory_reply(chitta.edit(p["id"], kind=p.get("kind"),
                                               tags=p.get("tags")))}  # fmt: skip


def _provenance(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.wire import provenance_to_dict

    return provenance_to_dict(chitta.provenance(p["id"]))


def _on_id(action: str):
    def run(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
        getattr(chitta, action)(p["id"])
        return {"id": p["id"]}

    return run


def _supersede(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    chitta.supersede(p["old_id"], p["new_id"])
    return {"old_id": p["old_id"], "new_id": p["new_id"]}


def _decay(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    done = chitta.decay()
    return {"decayed": done.changed, "demoted": done.demoted}


SCOPE = (REALM, AGENT, CHANNEL)

REMEMBER = Operation(
    "remember",
    "Store CONTENT as a memory ('-' reads it from stdin).",
    (
        Param(
            "content",
            "text",
            "One fact, decision, lesson or preference.",
            cli_help="The memory: one fact, decision, lesson or preference.",
            required=True,
            positional=True,
            max_length=MAX_CONTENT_CHARS,
            too_large=ContentTooLong,
            strip=True,
        ),
        Param(
            "kind",
            "text",
            "Its kind (default insight).",
            short="-k",
            enum=KINDS,
            max_length=MAX_WORD_CHARS,
            cli_help=f"One of: {KINDS_HELP} (default insight).",
        ),
        REALM,
        replace(AGENT, help="The agent it belongs to (an isolation axis)."),
        replace(CHANNEL, help="The channel it belongs to (an isolation axis)."),
        Param(
            "tags",
            "tags",
            'Tags, e.g. ["storage"].',
            short="-t",
            cli_help="Tags: a list, or comma-separated (storage,decision).",
            max_length=MAX_TAG_CHARS,
            max_items=MAX_TAGS,
        ),
        Param(
            "event_time",
            "when",
            "When it happened (ISO 8601).",
            cli_help="When it happened (ISO 8601), if not now.",
        ),
        Param("supersedes", "text", "Id of the memory it replaces.", max_length=MAX_ID_CHARS),
        Param(
            "confidence",
            "number",
            "How sure, 0 to 1 (default 0.7).",
            minimum=0,
            maximum=1,
            mcp=False,  # evidence comes through strengthen and weaken
        ),
        Param(
            "session",
            "text",
            "Source: the session it came from.",
            mcp=False,
            max_length=MAX_SESSION_CHARS,
        ),
        Param(
            "file", "text", "Source: the file it is about.", mcp=False, max_length=MAX_PATH_CHARS
        ),
        Param("url", "text", "Source: the URL it came from.", mcp=False, max_length=MAX_PATH_CHARS),
        # The Stop hook's provenance of a turn; scoring trusts the assistant's own text and a
        # tool's output less than the user's words (docs/memory-model.md, Provenance).
        Param(
            "role",
            "text",
            "Source: who said it: the user, the assistant, or a tool (its output).",
            choices=SOURCE_ROLES,
            mcp=False,
            max_length=MAX_WORD_CHARS,
        ),
    ),  # fmt: skip
    _remember,
    writes=True,
    creates=True,
    effect="write",
    mcp="Store a memory (a near-duplicate reinforces the old one).",
)

#: The question's own date (a benchmark's question_date, a replayed conversation's).
NOW = Param(
    "now",
    "when",
    "When it is asked, if not now; time cues count back from it.",
    cli_help=f"When the question is asked, if not now (recency and time cues count "
    f"back from it); {DATE_HELP}.",
    mcp=False,  # for replays and benchmarks; an agent asks now (the tool list's budget)
)

RECALL = Operation(
    "recall",
    "Find the memories that best answer QUERY, with the lanes that found them, and the "
    "corrections it names.",
    (
        QUERY,
        *SCOPE,
        LIMIT,
        STRATEGY,
        Param(
            "ablate",
            "list",
            f"Lanes or stages to switch off: {', '.join(sorted(KNOWN_LANES | KNOWN_STAGES))}.",
            mcp=False,  # a benchmark's knob, not an agent's
            max_length=MAX_WORD_CHARS,
            max_items=32,
        ),
        # A benchmark's knob, not an agent's; the CLI and the daemon take it.
        Param(
            "fusion",
            "text",
            "Fusion (default: the strategy's).",
            choices=FUSIONS,
            mcp=False,
            max_length=MAX_WORD_CHARS,
        ),
        Param("cross_realm", "flag", "Also search the other realms.", default=False),
        # The old spelling of ablate=["hdc"], kept so that scripts still run.
        Param(
            "disable_hdc",
            "flag",
            "Skip the hdc lane (same as --ablate hdc).",
            default=False,
            mcp=False,
            hidden=True,
        ),
        Param(
            "include_superseded", "flag", "Also return replaced memories.", default=False, mcp=False
        ),
        SESSION,
        Param(
            "rerank",
            "flag",
            "Use the cross-encoder stage, if one is set up.",
            default=True,
            mcp=False,  # the operator's choice (CHITTA_RERANK_ONNX_DIR), not an agent's
            cli_help="Skip the cross-encoder stage (if one is set up).",
        ),
        TRACE,
        TIME_CUE,
        NOW,
        # Staleness of the hits' linked code judged as of a commit's index (docs/code.md).
        Param(
            "as_of_commit",
            "text",
            "Judge possibly stale hits against the code index as of this commit.",
            cli_help="Judge possibly stale hits against the symbol table as indexed at this "
            "commit (or the newest index before it): a hash, tag or branch.",
            mcp=False,  # the MCP tool list's budget is full
            max_length=MAX_WORD_CHARS,
        ),
        VERBOSE,
        # false: leave no access history (cited recall's reads of other stores).
        Param(
            "record", "flag", "Record the hits' access history.", default=True, cli=False, mcp=False
        ),
    ),  # fmt: skip
    _recall,
    mcp="Memories answering a query, best first: rows [text, id, kind, age, realm if other]; "
    "band KNOWN or UNKNOWN (then only rows sharing a rare word).",
)

RECONSTRUCT = Operation(
    "reconstruct",
    "Answer QUERY with items that quote the stored records behind them, within a budget.",
    (
        QUERY,
        *SCOPE,
        LIMIT,
        Param(
            "budget",
            "int",
            "Characters of quotes, at most.",
            default=DEFAULT_BUDGET,
            minimum=100,
            maximum=100_000,
        ),
        replace(STRATEGY, mcp=False),
        SESSION,
        TRACE,
        replace(TIME_CUE, mcp=False),  # recall takes it; its definition is long
        NOW,
        VERBOSE,
    ),  # fmt: skip
    _reconstruct,
    mcp="recall as quotes within a character budget; omitted: ids that did not fit.",
)

SHOW = Operation(
    "get_memory",
    "Show one memory with all its fields (forgotten ones too).",
    (MEMORY_ID,),
    _get,
)

EDIT = Operation(
    "edit_memory",
    "Correct a memory's kind or tags by hand (its text stays: say something else as a new "
    "memory that supersedes it).",
    (
        MEMORY_ID,
        Param(
            "kind",
            "text",
            "Its new kind.",
            short="-k",
            enum=KINDS,
            max_length=MAX_WORD_CHARS,
            cli_help=f"One of: {KINDS_HELP}.",
        ),
        Param(
            "tags",
            "tags",
            "Its tags, replacing the old ones ([] removes them all).",
            short="-t",
            cli_help="Tags replacing the old ones: a list, or comma-separated.",
            max_length=MAX_TAG_CHARS,
            max_items=MAX_TAGS,
        ),
    ),
    _edit,
    writes=True,
)

PROVENANCE = Operation(
    "provenance",
    "Show where a memory came from: its source and the trust recall gives it, the turns it "
    "was drawn from, the other sources that stored it again, what it replaced.",
    (MEMORY_ID,),
    _provenance,
    mcp="Where a memory came from: source, trust, turns it was drawn from, replications.",
    detail="Source kinds, from most to least trusted by default: stated (remembered on "
    "purpose), user, import, file, distiller, assistant, tool, url. The trust is the scoring "
    "stage's provenance factor (scoring.json's provenance section). A turn's text is cut to "
    "its start; get_memory shows it whole.",
)


def _lifecycle(name: str, summary: str, **how: Any) -> Operation:
    """An operation on one memory by id, the API method of the same name (it writes)."""
    return Operation(name, summary, (MEMORY_ID,), _on_id(name), writes=True, **how)


FORGET = _lifecycle("forget", "Forget a memory (soft delete: restore brings it back).",
                    effect="destructive", mcp="Forget a memory (soft delete).")  # fmt: skip
RESTORE = _lifecycle("restore", "Bring back a forgotten memory.")
PURGE = _lifecycle("purge", "Remove a memory for good.")
STRENGTHEN = _lifecycle("strengthen",
                        "Record evidence for a memory (confidence and strength go up).",
                        effect="write", mcp="Evidence for a memory (more confidence).")  # fmt: skip
WEAKEN = _lifecycle("weaken",
                    "Record evidence against a memory (confidence and strength go down).",
                    effect="write", mcp="Evidence against a memory (less confidence).")  # fmt: skip
SUPERSEDE = Operation(
    "supersede",
    "Record that NEW_ID replaces OLD_ID (recall then shows only the new one).",
    (
        Param(
            "old_id",
            "text",
            "The memory that is replaced.",
            required=True,
            positional=True,
            max_length=MAX_ID_CHARS,
        ),
        Param(
            "new_id",
            "text",
            "The memory that replaces it (same realm).",
            required=True,
            positional=True,
            max_length=MAX_ID_CHARS,
        ),
    ),  # fmt: skip
    _supersede,
    writes=True,
)
DECAY = Operation(
    "decay", "Apply each kind's decay rate for the time since the last decay.", (), _decay,
    writes=True,
)  # fmt: skip

OPERATIONS = (REMEMBER, RECALL, RECONSTRUCT, SHOW, EDIT, PROVENANCE, FORGET, RESTORE, PURGE,
              STRENGTHEN, WEAKEN, SUPERSEDE, DECAY)  # fmt: skip

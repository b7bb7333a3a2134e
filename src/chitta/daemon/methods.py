"""The daemon's JSON-RPC methods: one per MCP tool (DESIGN.md §5), over one open store.

Each method takes named parameters, checks them (an unknown or mistyped one is an error
naming it), calls the :class:`~chitta.api.Chitta` facade and returns a JSON object with
``"ok": true``. Chitta's own errors pass through as they are; the server turns them into
JSON-RPC errors carrying their code. Methods that write say so (``writes``): the server runs
those one at a time.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chitta.api import Chitta
from chitta.errors import BadArgument
from chitta.recall.reconstruct import DEFAULT_BUDGET
from chitta.relations.service import triplet_to_dict
from chitta.store.records import Source

Params = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Param:
    """A named parameter: its JSON type(s), and whether it must be given."""

    types: tuple[type, ...]
    required: bool = False


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    run: Callable[[Chitta, Params], dict[str, Any]]
    params: Mapping[str, Param]
    writes: bool


_TEXT = Param((str,))
_OPTIONAL_TEXT = Param((str, type(None)))
_FLAG = Param((bool,))
_LIST = Param((list,))
_OPTIONAL_OBJECT = Param((dict, type(None)))
#: A time: ISO 8601 text or epoch milliseconds (a JSON number, whole or not), or null.
_WHEN = Param((str, int, float, type(None)))


def check_params(method: Method, params: Params) -> None:
    """Refuse unknown, missing or mistyped parameters, naming the first one."""
    unknown = sorted(set(params) - set(method.params))
    if unknown:
        raise BadArgument(
            f"unknown parameter {unknown[0]!r} for {method.name}; it takes: "
            f"{', '.join(sorted(method.params)) or 'nothing'}"
        )
    for name, spec in method.params.items():
        if name not in params:
            if spec.required:
                raise BadArgument(f"{method.name} needs the parameter {name!r}")
            continue
        value = params[name]
        if isinstance(value, bool) and bool not in spec.types:
            raise BadArgument(f"{name} must be {_kinds(spec)}, got a boolean")
        if not isinstance(value, spec.types):
            raise BadArgument(f"{name} must be {_kinds(spec)}, got {type(value).__name__}")


def _kinds(spec: Param) -> str:
    names = {str: "text", int: "a number", float: "a number", bool: "true or false",
             list: "a list", dict: "an object", type(None): "null"}  # fmt: skip
    return " or ".join(dict.fromkeys(names[t] for t in spec.types))


def _remember(chitta: Chitta, p: Params) -> dict[str, Any]:
    source = Source(session=p.get("session"), file=p.get("file"), url=p.get("url"))
    done = chitta.remember(
        p["content"], kind=p.get("kind"), realm=p.get("realm"), agent_id=p.get("agent_id"),
        channel=p.get("channel"), tags=p.get("tags"), source=source,
        event_time=p.get("event_time"), supersedes=p.get("supersedes"),
        confidence=p.get("confidence"),
    )  # fmt: skip
    return {"ok": True, "id": done.id, "deduplicated": done.deduplicated,
            "similarity": done.similarity, "truncated": done.truncated,
            "supersedes": done.supersedes}  # fmt: skip


def _recall(chitta: Chitta, p: Params) -> dict[str, Any]:
    from chitta.wire import result_to_dict

    ablate = p.get("ablate", [])
    if not all(isinstance(lane, str) for lane in ablate):
        raise BadArgument("ablate must be a list of lane names")
    result = chitta.recall(
        p["query"], realm=p.get("realm"), agent_id=p.get("agent_id"), channel=p.get("channel"),
        limit=p.get("limit", 10), strategy=p.get("strategy", "hybrid"), ablate=ablate,
        include_superseded=p.get("include_superseded", False), fusion=p.get("fusion"),
        cross_realm=p.get("cross_realm", False), disable_hdc=p.get("disable_hdc", False),
        session=p.get("session"), rerank=p.get("rerank", True), trace=p.get("trace", False),
        time_cue=p.get("time_cue"), record=p.get("record", True),
    )  # fmt: skip
    return {"ok": True, **result_to_dict(result)}


def _reconstruct(chitta: Chitta, p: Params) -> dict[str, Any]:
    from chitta.wire import reconstruction_to_dict

    rec = chitta.reconstruct(
        p["query"], realm=p.get("realm"), agent_id=p.get("agent_id"), channel=p.get("channel"),
        limit=p.get("limit", 10), budget=p.get("budget", DEFAULT_BUDGET),
        strategy=p.get("strategy", "hybrid"), session=p.get("session"),
        trace=p.get("trace", False), time_cue=p.get("time_cue"),
    )  # fmt: skip
    return {"ok": True, **reconstruction_to_dict(rec)}


def _one_id(action: Callable[[Chitta, str], object]) -> Callable[[Chitta, Params], dict]:
    def run(chitta: Chitta, p: Params) -> dict[str, Any]:
        action(chitta, p["id"])
        return {"ok": True, "id": p["id"]}

    return run


def _status(chitta: Chitta, p: Params) -> dict[str, Any]:
    return {"ok": True, **chitta.status()}


def _export(chitta: Chitta, p: Params) -> dict[str, Any]:
    from chitta.transfer import export_jsonl

    out = io.StringIO()
    counts = export_jsonl(chitta, out, realm=p.get("realm"),
                          embeddings=p.get("embeddings", False),
                          include_deleted=p.get("include_deleted", False))  # fmt: skip
    return {"ok": True, "counts": counts, "jsonl": out.getvalue()}


def _import(chitta: Chitta, p: Params) -> dict[str, Any]:
    from chitta.transfer import import_jsonl

    # Lines end at "\n" only: a memory may hold U+2028 and the like, which splitlines() cuts.
    report = import_jsonl(chitta, p["jsonl"].split("\n"), into=p.get("into"))
    return {"ok": True, **report.as_dict()}


def _add_triplet(chitta: Chitta, p: Params) -> dict[str, Any]:
    done = chitta.relations.add(
        p["subject"], p["predicate"], p["object"], weight=p.get("weight", 1.0),
        valid_from=p.get("valid_from"), source_memory=p.get("source_memory"),
        realm=p.get("realm"),
    )  # fmt: skip
    return {"ok": True, "existing": done.existing, "triplet": triplet_to_dict(done.triplet)}


def _invalidate_triplet(chitta: Chitta, p: Params) -> dict[str, Any]:
    done = chitta.relations.invalidate(p["id"], p.get("at"))
    return {"ok": True, "already": done.already, "triplet": triplet_to_dict(done.triplet)}


def _find_triplets(chitta: Chitta, p: Params) -> dict[str, Any]:
    found = chitta.relations.find(
        subject=p.get("subject"), predicate=p.get("predicate"), object_=p.get("object"),
        realm=p.get("realm"), as_of=p.get("as_of"),
        include_invalidated=p.get("include_invalidated", False), limit=p.get("limit", 100),
    )  # fmt: skip
    return {"ok": True, "triplets": [triplet_to_dict(t) for t in found]}


def _alias_entity(chitta: Chitta, p: Params) -> dict[str, Any]:
    alias_key, canonical_key = chitta.relations.alias(p["alias"], p["canonical"], p.get("realm"))
    return {"ok": True, "alias_key": alias_key, "canonical_key": canonical_key}


def _remove_alias(chitta: Chitta, p: Params) -> dict[str, Any]:
    return {"ok": True, "removed": chitta.relations.unalias(p["alias"], p.get("realm"))}


def _list_aliases(chitta: Chitta, p: Params) -> dict[str, Any]:
    return {"ok": True, "aliases": chitta.relations.aliases(p.get("realm"))}


def _recall_analogy(chitta: Chitta, p: Params) -> dict[str, Any]:
    found = chitta.recall_analogy(p["a"], p["b"], p["c"], realm=p.get("realm"),
                                  as_of=p.get("as_of"), limit=p.get("limit", 10))  # fmt: skip
    return {"ok": True, **found.as_dict()}


def _cited_recall(chitta: Chitta, p: Params) -> dict[str, Any]:
    from pathlib import Path

    from chitta.cited.service import answer

    config = p.get("config")
    if config is not None:
        config = Path(config).expanduser()
        if not config.is_absolute():
            # The daemon's working folder is not the caller's: a relative path would name
            # another file than the one meant.
            raise BadArgument(f"config must be an absolute path, got {str(config)!r}")
    # The store is <home>/<name>.db (config.store_path): its folder is the home, where
    # cited.toml is looked for by default.
    home = chitta.store.path.parent
    done = answer(chitta, home, p["query"], limit=p.get("limit"), config=config)
    return {"ok": True, **done.as_dict()}


_SCOPE = {"realm": _OPTIONAL_TEXT, "agent_id": _OPTIONAL_TEXT, "channel": _OPTIONAL_TEXT}
_ID = {"id": Param((str,), required=True)}

METHODS: Mapping[str, Method] = {
    m.name: m
    for m in (
        Method(
            "remember",
            _remember,
            {
                "content": Param((str,), required=True),
                "kind": _OPTIONAL_TEXT,
                **_SCOPE,
                "tags": Param((str, list, type(None))),
                "session": _OPTIONAL_TEXT,
                "file": _OPTIONAL_TEXT,
                "url": _OPTIONAL_TEXT,
                "event_time": _OPTIONAL_TEXT,
                "supersedes": _OPTIONAL_TEXT,
                "confidence": Param((int, float, type(None))),
            },
            writes=True,
        ),  # fmt: skip
        Method(
            "recall",
            _recall,
            {
                "query": Param((str,), required=True),
                **_SCOPE,
                "limit": Param((int,)),
                "strategy": _TEXT,
                "ablate": _LIST,
                "include_superseded": _FLAG,
                "fusion": _OPTIONAL_TEXT,
                "cross_realm": _FLAG,
                "disable_hdc": _FLAG,
                "session": _OPTIONAL_TEXT,
                "rerank": _FLAG,
                "trace": _FLAG,
                "time_cue": _OPTIONAL_OBJECT,
                "record": _FLAG,  # false: no access history (cited recall's other stores)
            },
            writes=False,
        ),  # fmt: skip
        Method(
            "reconstruct",
            _reconstruct,
            {
                "query": Param((str,), required=True),
                **_SCOPE,
                "limit": Param((int,)),
                "budget": Param((int,)),
                "strategy": _TEXT,
                "session": _OPTIONAL_TEXT,
                "trace": _FLAG,
                "time_cue": _OPTIONAL_OBJECT,
            },
            writes=False,
        ),
        Method(
            "add_triplet",
            _add_triplet,
            {
                "subject": Param((str,), required=True),
                "predicate": Param((str,), required=True),
                "object": Param((str,), required=True),
                "weight": Param((int, float)),
                "valid_from": _WHEN,
                "source_memory": _OPTIONAL_TEXT,
                "realm": _OPTIONAL_TEXT,
            },
            writes=True,
        ),
        Method(
            "invalidate_triplet",
            _invalidate_triplet,
            {**_ID, "at": _WHEN},
            writes=True,
        ),
        Method(
            "find_triplets",
            _find_triplets,
            {
                "subject": _OPTIONAL_TEXT,
                "predicate": _OPTIONAL_TEXT,
                "object": _OPTIONAL_TEXT,
                "realm": _OPTIONAL_TEXT,
                "as_of": _WHEN,
                "include_invalidated": _FLAG,
                "limit": Param((int,)),
            },
            writes=False,
        ),
        Method(
            "alias_entity",
            _alias_entity,
            {
                "alias": Param((str,), required=True),
                "canonical": Param((str,), required=True),
                "realm": _OPTIONAL_TEXT,
            },
            writes=True,
        ),
        Method(
            "remove_alias",
            _remove_alias,
            {"alias": Param((str,), required=True), "realm": _OPTIONAL_TEXT},
            writes=True,
        ),
        Method("list_aliases", _list_aliases, {"realm": _OPTIONAL_TEXT}, writes=False),
        Method(
            "recall_analogy",
            _recall_analogy,
            {
                "a": Param((str,), required=True),
                "b": Param((str,), required=True),
                "c": Param((str,), required=True),
                "realm": _OPTIONAL_TEXT,
                "as_of": _WHEN,
                "limit": Param((int,)),
            },
            writes=False,
        ),
        Method(
            "cited_recall",
            _cited_recall,
            {
                "query": Param((str,), required=True),
                "limit": Param((int, type(None))),
                "config": _OPTIONAL_TEXT,  # a cited.toml path; default <home>/cited.toml
            },
            writes=False,
        ),
        Method("forget", _one_id(Chitta.forget), _ID, writes=True),
        Method("strengthen", _one_id(Chitta.strengthen), _ID, writes=True),
        Method("weaken", _one_id(Chitta.weaken), _ID, writes=True),
        Method("memory_status", _status, {}, writes=False),
        Method(
            "export_memories",
            _export,
            {
                "realm": _OPTIONAL_TEXT,
                "embeddings": _FLAG,
                "include_deleted": _FLAG,
            },
            writes=False,
        ),  # fmt: skip
        Method(
            "import_memories",
            _import,
            {
                "jsonl": Param((str,), required=True),
                "into": _OPTIONAL_TEXT,
            },
            writes=True,
        ),  # fmt: skip
    )
}

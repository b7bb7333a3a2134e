"""The Python API through the daemon: :class:`DaemonChitta` has the methods of
:class:`~chitta.api.Chitta` and returns the same result types, each call one JSON-RPC request
to the daemon that holds the store (chitta/daemon/client.py).

``Chitta.open()`` returns one when a daemon answers on the store's socket. What lives only in
the daemon's process (the store handle, the embedder, the clock, the session log) is not
offered: asking for it raises :class:`~chitta.errors.InProcessOnly`, which says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from chitta.api import Remembered
from chitta.config import DEFAULT_REALM
from chitta.daemon.client import DaemonClient
from chitta.errors import BadArgument, InProcessOnly, MemoryNotFound
from chitta.ops import OPERATIONS
from chitta.recall.confidence import calibration as calib
from chitta.recall.reconstruct import DEFAULT_BUDGET, Reconstruction, check_budget, items_within
from chitta.recall.result import RecallResult
from chitta.relations.analogy import Analogy
from chitta.relations.service import Added, Invalidated, triplet_from_dict
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Source, Triplet
from chitta.subconscious.decay import Decayed
from chitta.validate import check_scope_name
from chitta.wire import memory_from_reply, remembered_from_dict, result_from_dict

#: How long a call waits for the daemon's reply. The daemon answers by its own deadline at the
#: latest; long work (re-embedding, a restore, calibrating) is waited for as long as it takes.
WAIT_S = 600.0
#: What a Chitta has in its own process only, and why it is not here.
IN_PROCESS = {
    "store": "the store handle",
    "embedder": "the embedding model",
    "clock": "the clock",
    "switches": "the recall switches",
    "scoring": "the scoring settings",
    "reranker": "the cross-encoder",
    "gate": "the admission gate's settings",
    "sessions": "the session log",
    "shown": "the hooks' shown sets",
    "opened_at": "the time the store was opened",
}


class DaemonChitta:
    """A store that a running daemon holds, used like an open :class:`~chitta.api.Chitta`.

    Each call is one request on a connection of its own, so one instance may be used from
    several threads. A call that names no realm is about :attr:`realm` (this process's realm
    rule, not the daemon's)."""

    def __init__(self, socket_path: Path, *, realm: str = DEFAULT_REALM, home: Path) -> None:
        self.socket_path = Path(socket_path)
        self.realm = check_scope_name(realm, "realm") or DEFAULT_REALM
        self.home = home

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the class does not define.
        if name in IN_PROCESS:
            raise InProcessOnly(
                f"{name} ({IN_PROCESS[name]}) lives in the daemon's process; this Chitta talks "
                f"to the daemon on {self.socket_path}. Stop the daemon and open the store with "
                "Chitta.open(through_daemon=False) to use it"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def call(
        self,
        method: str,
        *,
        progress: Callable[[int, int], None] | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """The reply of one operation (ops/), ``ok`` included; a refusal raises the
        :class:`~chitta.errors.ChittaError` of its code (the client raises the same class as
        the store would in process)."""
        # Long work (ops/: import, re-embedding, a restore, calibrating) is waited for.
        wait = None if OPERATIONS[method].long else WAIT_S
        with DaemonClient(self.socket_path, timeout_s=wait) as client:
            return client.call(method, progress=progress, **params)

    def close(self) -> None:
        """Nothing to release: each call opened and closed its own connection."""

    def __enter__(self) -> DaemonChitta:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _realm(self, realm: object) -> object:
        return realm or self.realm

    # --- writing -------------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        kind: str | Kind | None = None,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        tags: str | Sequence[str] | None = None,
        source: Source | None = None,
        event_time: object = None,
        supersedes: str | None = None,
        confidence: float | None = None,
    ) -> Remembered:
        """Store one memory through the quality gate; a near-duplicate reinforces instead."""
        source = source or Source()
        if source.ref is not None:
            raise InProcessOnly("a source ref cannot be sent to the daemon (its remember takes "
                                "session, file and url)")  # fmt: skip
        reply = self.call(
            "remember", content=content, kind=kind.value if isinstance(kind, Kind) else kind,
            realm=self._realm(realm), agent_id=agent_id, channel=channel,
            tags=tags if tags is None or isinstance(tags, str) else list(tags),
            event_time=_when(event_time), supersedes=supersedes, confidence=confidence,
            session=source.session, file=source.file, url=source.url, role=source.role,
        )  # fmt: skip
        return remembered_from_dict(reply)

    def supersede(self, old_id: str, new_id_: str) -> None:
        """Mark ``new_id_`` as the memory that replaces ``old_id``."""
        self.call("supersede", old_id=old_id, new_id=new_id_)

    def strengthen(self, memory_id: str) -> Memory:
        """Positive evidence: confidence observes 1, strength goes up one step."""
        return self._then_get("strengthen", memory_id)

    def weaken(self, memory_id: str) -> Memory:
        """Negative evidence: confidence observes 0, strength goes down one step."""
        return self._then_get("weaken", memory_id)

    def decay(self, now: int | None = None) -> Decayed:
        """Apply each memory's kind decay for the time since it was last decayed (the daemon's
        clock says when now is)."""
        if now is not None:
            raise InProcessOnly("decay(now=...) needs the store's own clock; through the "
                                "daemon, decay runs at the daemon's now")  # fmt: skip
        reply = self.call("decay")
        return Decayed(reply["decayed"], reply.get("demoted", 0))

    def forget(self, memory_id: str) -> Memory:
        """Soft delete: hidden from every read, recoverable with :meth:`restore`."""
        return self._then_get("forget", memory_id)

    def restore(self, memory_id: str) -> Memory:
        """Bring back a forgotten memory."""
        return self._then_get("restore", memory_id)

    def purge(self, memory_id: str) -> None:
        """Remove a memory for good (forgotten or not)."""
        self.call("purge", id=memory_id)

    def _then_get(self, method: str, memory_id: str) -> Memory:
        self.call(method, id=memory_id)
        return self.get(memory_id, include_deleted=True)

    # --- calibration ---------------------------------------------------------------------------

    @property
    def calibration(self) -> calib.Calibration:
        """The store's own fit (`chitta calibrate`), or the default one, as the daemon uses it."""
        return calib.Calibration(**self.call("calibrate", show=True)["calibration"])

    def set_calibration(self, fit: calib.Calibration | None) -> None:
        """``None`` goes back to the default fit. Storing a given fit is done in process (or
        with `chitta calibrate GOLDEN`, which fits and stores one through the daemon)."""
        if fit is not None:
            raise InProcessOnly("the daemon stores only the fits it makes (`chitta calibrate "
                                "GOLDEN`); set_calibration(None) resets")  # fmt: skip
        self.call("calibrate", reset=True)

    # --- reading -------------------------------------------------------------------------------

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        memory = memory_from_reply(self.call("get_memory", id=memory_id)["memory"])
        if memory.deleted_at is not None and not include_deleted:
            # The store's own words for it (the backend's Store.get).
            raise MemoryNotFound(
                f"memory {memory_id} is forgotten (restore it with `chitta restore`)"
            )
        return memory

    def session_shown(
        self, session: str, *, add: Sequence[str] = (), forget: bool = False
    ) -> tuple[str, ...]:
        """The ids the hooks put into agent session ``session``'s context (as Chitta's)."""
        reply = self.call("session_shown", session=session, add=list(add), forget=forget)
        return tuple(reply["shown"])

    def recall(
        self,
        query: str,
        *,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        limit: int = 10,
        strategy: str = "hybrid",
        ablate: Sequence[str] = (),
        include_superseded: bool = False,
        fusion: str | None = None,
        cross_realm: bool = False,
        disable_hdc: bool = False,
        session: str | None = None,
        rerank: bool = True,
        record: bool = True,
        trace: bool = False,
        time_cue: object = None,
        now: object = None,
        as_of_commit: str | None = None,
    ) -> RecallResult:
        """The best ``limit`` memories for ``query`` in one scope (see
        :meth:`chitta.api.Chitta.recall`); scores as the reply rounds them
        (chitta/wire.py :func:`~chitta.wire.result_from_dict` says what is carried)."""
        reply = self.call(
            "recall", query=query, realm=self._realm(realm), agent_id=agent_id, channel=channel,
            limit=limit, strategy=strategy, ablate=list(ablate),
            include_superseded=include_superseded, fusion=fusion, cross_realm=cross_realm,
            disable_hdc=disable_hdc, session=session, rerank=rerank, record=record,
            trace=trace, time_cue=time_cue, now=now,
            # Sent only when given: a daemon from before it still answers every other recall.
            **({} if as_of_commit is None else {"as_of_commit": as_of_commit}),
        )  # fmt: skip
        return result_from_dict(reply)

    def reconstruct(
        self,
        query: str,
        *,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        limit: int = 10,
        budget: int = DEFAULT_BUDGET,
        strategy: str = "hybrid",
        session: str | None = None,
        trace: bool = False,
        time_cue: object = None,
        now: object = None,
    ) -> Reconstruction:
        """The answer to ``query`` as items quoting the recalled records, within ``budget``.

        As in process, it is the recall's hits quoted (recall/reconstruct.py): the recall runs
        in the daemon and the quoting here, so that ``.recall`` holds the whole recall."""
        check_budget(budget)
        result = self.recall(query, realm=realm, agent_id=agent_id, channel=channel, limit=limit,
                             strategy=strategy, session=session, trace=trace,
                             time_cue=time_cue, now=now)  # fmt: skip
        items, omitted = items_within(result.hits, budget)
        return Reconstruction(tuple(items), tuple(omitted), budget, result)

    # --- maintenance ---------------------------------------------------------------------------

    def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory again with the daemon's model and record that model."""
        return self.call("reembed", progress=progress)["reembedded"]

    def backup(self, dest: Path) -> None:
        self.call("backup", path=_absolute(dest))

    def restore_backup(self, source: Path) -> Path:
        """Replace the store's contents with the backup at ``source`` (checked first); where
        the old contents were kept."""
        return Path(self.call("restore_backup", path=_absolute(source))["saved"])

    @property
    def relations(self) -> DaemonRelations:
        """This store's triplets and entity aliases, as relations/service.py Relations."""
        return DaemonRelations(self)

    def recall_analogy(self, a: object, b: object, c: object, **options: object) -> Analogy:
        """a:b :: c:? over the realm's triplets, or an abstention saying what is missing
        (relations/analogy.py; options: realm, as_of, limit)."""
        unknown = sorted(set(options) - {"realm", "as_of", "limit"})
        if unknown:
            raise BadArgument(f"recall_analogy takes realm, as_of and limit, not {unknown[0]!r}")
        reply = self.call(
            "recall_analogy", a=a, b=b, c=c, realm=self._realm(options.get("realm")),
            as_of=_when(options.get("as_of")), limit=options.get("limit"),
        )  # fmt: skip
        return Analogy.from_dict(reply)

    def status(self) -> dict[str, object]:
        """Figures about the store and the embedder, as in process, and the daemon's own
        (``daemon``: requests, errors and timings per method)."""
        reply = self.call("memory_status")
        return {k: v for k, v in reply.items() if k not in ("ok", "exists")}


class DaemonRelations:
    """A store's triplets and aliases through the daemon, as relations/service.py
    :class:`~chitta.relations.service.Relations` has them."""

    def __init__(self, chitta: DaemonChitta) -> None:
        self.chitta = chitta
        self.realm = chitta.realm

    def add(
        self,
        subject: object,
        predicate: object,
        object_: object,
        *,
        weight: object = 1.0,
        valid_from: object = None,
        source_memory: object = None,
        realm: object = None,
    ) -> Added:
        """Store the edge ``subject —predicate→ object``; an equal current edge is returned
        instead of written twice."""
        reply = self.chitta.call(
            "add_triplet", subject=subject, predicate=predicate, object=object_, weight=weight,
            valid_from=_when(valid_from), source_memory=source_memory or None,
            realm=realm or self.realm,
        )  # fmt: skip
        return Added(triplet_from_dict(reply["triplet"]), existing=reply["existing"])

    def invalidate(self, triplet_id: object, at: object = None) -> Invalidated:
        """Mark an edge invalid from ``at`` (default now); it stays for history."""
        reply = self.chitta.call("invalidate_triplet", id=triplet_id, at=_when(at))
        return Invalidated(triplet_from_dict(reply["triplet"]), already=reply["already"])

    def alias(
        self, alias: object, canonical: object, realm: object = None, created_at: int | None = None
    ) -> tuple[str, str]:
        """Make ``alias`` name the same entity as ``canonical``; returns their keys."""
        if created_at is not None:
            raise InProcessOnly("an alias made through the daemon is made now (created_at is "
                                "for an import, which keeps its own times)")  # fmt: skip
        reply = self.chitta.call("alias_entity", alias=alias, canonical=canonical,
                                 realm=realm or self.realm)  # fmt: skip
        return reply["alias_key"], reply["canonical_key"]

    def unalias(self, alias: object, realm: object = None) -> bool:
        """Forget an alias; False when there was none."""
        return self.chitta.call("remove_alias", alias=alias, realm=realm or self.realm)["removed"]

    def find(
        self,
        *,
        subject: object = None,
        predicate: object = None,
        object_: object = None,
        realm: object = None,
        as_of: object = None,
        include_invalidated: bool = False,
        limit: object = 100,
    ) -> list[Triplet]:
        """Edges matching the names given (aliases resolved), newest first."""
        reply = self.chitta.call(
            "find_triplets", subject=subject, predicate=predicate, object=object_,
            realm=realm or self.realm, as_of=_when(as_of),
            include_invalidated=include_invalidated, limit=limit,
        )  # fmt: skip
        return [triplet_from_dict(t) for t in reply["triplets"]]

    def aliases(self, realm: object = None) -> list[dict[str, Any]]:
        """The realm's aliases, by alias key, for a reply."""
        return self.chitta.call("list_aliases", realm=realm or self.realm)["aliases"]


def _when(value: object) -> object:
    """A time as the wire takes it: a datetime as ISO 8601 text (a naive one is read as UTC,
    as in process), anything else as given (the daemon checks it)."""
    return value.isoformat() if isinstance(value, datetime) else value


def _absolute(path: object) -> str:
    """A path the daemon can use: its working folder is not this process's."""
    return str(Path(path).expanduser().absolute())  # type: ignore[arg-type]

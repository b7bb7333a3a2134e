"""Another chitta store file as a cited recall source (kind ``chitta_file``).

One process owns a store file at a time (its instance lock), so each search asks in one of two ways:

- a daemon serves the store (its socket answers): its ``recall`` RPC method, with
  ``record: false``;
- otherwise the file is opened in this process with this process's embedder, recalled and
  closed again at once. Nothing is held between searches, so the other store's own daemon or
  CLI can still start; the cost is opening it per search.

The socket is the one ``chitta serve`` uses for that file (``chitta.sock`` beside
``default.db``, ``chitta-<name>.sock`` beside ``<name>.db``) unless the ``socket`` option
names another. Either way the rows pass the same admission gate as the ``chitta`` source's.
A missing file is a :class:`SourceError`; no store is ever created.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from chitta.cited.base import Chunk, SourceError
from chitta.cited.settings import DEFAULT_PRIORITY
from chitta.cited.sources.chitta_store import admitted_rows, chunks_of, recall_reply
from chitta.config import DEFAULT_REALM, DEFAULT_STORE, SOCKET_NAME
from chitta.daemon.client import DaemonClient, daemon_answers
from chitta.embed.base import Embedder
from chitta.errors import ChittaError, StoreLocked
from chitta.recall.confidence.gate import GateSettings


def socket_for(path: Path) -> Path | None:
    """Where ``chitta serve`` listens for the store file ``path`` (config.Settings'
    socket_path), or None for a file not named ``<store>.db``."""
    if path.suffix != ".db" or not path.stem:
        return None
    name = SOCKET_NAME if path.stem == DEFAULT_STORE else f"chitta-{path.stem}.sock"
    return path.parent / name


class ChittaFileSource:
    """The chitta store in the file ``path``: its ``realms`` by ``strategy``."""

    kind = "chitta_file"

    def __init__(
        self,
        name: str,
        path: Path | str,
        *,
        embedder: Callable[[], Embedder],
        realms: Sequence[str] = (DEFAULT_REALM,),
        strategy: str = "hybrid",
        priority: float = DEFAULT_PRIORITY["chitta_file"],
        socket: Path | str | None = None,
        gate: GateSettings | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        self.name = name
        self.priority = priority
        self.path = Path(path)
        self.realms = tuple(realms) or (DEFAULT_REALM,)
        self.strategy = strategy
        self.socket = Path(socket) if socket is not None else socket_for(self.path)
        self.gate = gate or GateSettings()
        self.timeout_s = timeout_s  # of each daemon call (the socket's timeout)
        self._make_embedder = embedder  # called once, on the first in-process search
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def search(self, query: str, limit: int) -> list[Chunk]:
        if not self.path.is_file():
            raise SourceError(f"no chitta store at {self.path}")
        if self.socket is not None and daemon_answers(self.socket):
            replies, via = self._ask_daemon(self.socket, query, limit), "daemon"
        else:
            replies, via = self._ask_file(query, limit), "file"
        realms = [
            admitted_rows(reply, realm=realm, limit=limit, strategy=self.strategy, gate=self.gate)
            for realm, reply in zip(self.realms, replies, strict=True)
        ]
        return [
            replace(c, meta={**c.meta, "via": via}) for c in chunks_of(self.name, realms, limit)
        ]

    def _ask_daemon(self, socket: Path, query: str, limit: int) -> list[dict[str, Any]]:
        """One ``recall`` RPC per realm, on one connection."""
        try:
            with DaemonClient(socket, timeout_s=self.timeout_s) as client:
                ask = {"query": query, "limit": limit, "strategy": self.strategy, "record": False}
                return [client.call("recall", realm=realm, **ask) for realm in self.realms]
        except ChittaError as exc:  # DaemonUnavailable, DaemonError
            raise SourceError(f"the daemon on {socket}: {exc}") from exc
        except ValueError as exc:  # a reply line that is not JSON
            raise SourceError(f"the daemon on {socket} answered malformed JSON: {exc}") from exc

    def _ask_file(self, query: str, limit: int) -> list[dict[str, Any]]:
        """Open the file in this process, recall each realm, close it."""
        from chitta.api import Chitta  # numpy and the recall pipeline: loaded when needed
        from chitta.recall.scoring_config import load_scoring
        from chitta.store.backends import open_store

        embedder = self._embedder_once()
        try:
            store = open_store(self.path, create=False)
        except StoreLocked as exc:
            where = f"on {self.socket}" if self.socket else "(set the source's socket option)"
            raise SourceError(f"{exc}; and no daemon answers {where}") from exc
        except ChittaError as exc:
            raise SourceError(f"cannot open {self.path}: {exc}") from exc
        try:
            store.bind_model(embedder.identity())
            scoring = load_scoring(self.path.parent)
            chitta = Chitta(store, embedder, scoring=scoring, gate=self.gate)
            return [recall_reply(chitta, query, realm, limit, self.strategy)
                    for realm in self.realms]  # fmt: skip
        except ChittaError as exc:
            raise SourceError(f"recall in {self.path} failed: {exc}") from exc
        finally:
            store.close()

    def _embedder_once(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                try:
                    self._embedder = self._make_embedder()
                except ChittaError as exc:
                    raise SourceError(f"no embedder to search {self.path}: {exc}") from exc
            return self._embedder

"""What the hooks put into each agent session's context, bounded, kept in the store.

The prompt hook injects a memory into a Claude Code session once: it asks for the session's
shown set before it merges its lanes, and adds what it injected after. The set lives in the
store's meta table (one key per session and one index of the sessions), not only in the
daemon's memory, because the daemon stops after its quiet period and a session outlives
it: a daemon started again must not show the session what it saw an hour ago.

Bounded twice: the newest :data:`MAX_SESSIONS` sessions (the least recently active is
forgotten first, its key deleted), and per session the newest :data:`MAX_IDS` ids.

Beside the set, each session's *last batch*: the ids its latest prompt was given, with the
time. The Stop hook takes it (once) to learn which of them the answer drew on
(recall/usage.py); a batch older than :data:`LAST_BATCH_MS` belongs to an answer long
finished and is not handed out.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Protocol

#: Sessions whose shown sets are kept; the least recently active is forgotten first.
MAX_SESSIONS = 256
#: Ids kept per session, the newest: far more than a session's prompts ever inject.
MAX_IDS = 512
#: The meta key of the index (the sessions, least recently active first), and each session's.
INDEX_KEY = "hook_shown_sessions"
KEY_PREFIX = "hook_shown:"
LAST_PREFIX = "hook_last:"
#: The oldest last batch still handed to the Stop hook: a long agentic answer's two hours.
LAST_BATCH_MS = 2 * 3600 * 1000


class MetaStore(Protocol):
    """The part of the store this log uses: its meta table."""

    def meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def delete_meta(self, key: str) -> None: ...


def _load(raw: str | None) -> list[str]:
    # A value that is not a list of text (a hand-edited store) counts as empty, not an error:
    # losing a shown set costs a repeat, never a prompt.
    try:
        value = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class ShownLog:
    """The shown set of every session, in the store's meta table."""

    def __init__(self, store: MetaStore) -> None:
        self._store = store
        self._lock = threading.Lock()  # one read-change-write at a time

    def shown(self, session: str) -> tuple[str, ...]:
        """The ids session ``session`` was shown, oldest first."""
        return tuple(_load(self._store.meta(KEY_PREFIX + session)))

    def update(
        self, session: str, add: Sequence[str] = (), *, forget: bool = False, at: int = 0
    ) -> tuple[str, ...]:
        """Forget the session's set first if ``forget``, then add ``add`` (the session's last
        batch from now, given at ``at`` ms); the set after."""
        with self._lock:
            ids = [] if forget else _load(self._store.meta(KEY_PREFIX + session))
            if add:
                batch = {"at": at, "ids": list(dict.fromkeys(add))[:MAX_IDS]}
                self._store.set_meta(LAST_PREFIX + session, json.dumps(batch))
            elif forget:
                self._store.delete_meta(LAST_PREFIX + session)
            ids = list(dict.fromkeys([*ids, *add]))[-MAX_IDS:]
            if ids:
                self._store.set_meta(KEY_PREFIX + session, json.dumps(ids))
            else:
                self._store.delete_meta(KEY_PREFIX + session)
            self._touch(session, keep=bool(ids))
            return tuple(ids)

    def _touch(self, session: str, *, keep: bool) -> None:
        """Move ``session`` to the index's end (or out of it); forget the oldest beyond the
        bound."""
        index = [s for s in _load(self._store.meta(INDEX_KEY)) if s != session]
        if keep:
            index.append(session)
        for old in index[:-MAX_SESSIONS]:
            self._store.delete_meta(KEY_PREFIX + old)
            self._store.delete_meta(LAST_PREFIX + old)
        self._store.set_meta(INDEX_KEY, json.dumps(index[-MAX_SESSIONS:]))

    def take_last(self, session: str, now: int) -> tuple[str, ...]:
        """The ids of the session's last batch, which is then gone (each answer's is taken
        once); none if it is older than :data:`LAST_BATCH_MS` at ``now`` or unreadable."""
        with self._lock:
            raw = self._store.meta(LAST_PREFIX + session)
            if raw is None:
                return ()
            self._store.delete_meta(LAST_PREFIX + session)
        try:
            batch = json.loads(raw)
            at, ids = int(batch["at"]), batch["ids"]
        except (ValueError, TypeError, KeyError):
            return ()  # a hand-edited store: a lost batch costs one answer's links
        if now - at > LAST_BATCH_MS or not isinstance(ids, list):
            return ()
        return tuple(i for i in ids if isinstance(i, str))

"""What an agent session did lately, for session priming (seed 001: Session Priming).

A session (a Claude Code session id, an agent run) primes recall with the memories it was
shown or stored lately and with the topics of its recent questions; the ``ctx`` lane reads
them. The log lives in the process that serves recalls (the daemon keeps it across clients)
and is bounded: the newest sessions, and per session the newest recalls only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass

#: Sessions remembered at once; the least recently active is forgotten first.
MAX_SESSIONS = 256
#: Per session: memories shown (a recall's top few) and recent queries kept.
MAX_SHOWN = 64
MAX_QUERIES = 5
#: How many of a recall's best hits count as shown to the session.
SHOWN_PER_RECALL = 5
#: Characters of a query's words kept as its topics (the first words; the hooks' queries are
#: at most this long, so theirs are kept whole): the log's memory is bounded whatever the
#: queries' length.
MAX_TOPIC_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class SessionView:
    """One session's priming for one recall: memories touched lately (newest first) and the
    distinctive words of its recent queries."""

    name: str
    primed: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()


class _Session:
    __slots__ = ("queries", "shown")

    def __init__(self) -> None:
        self.shown: deque[str] = deque(maxlen=MAX_SHOWN)
        self.queries: deque[tuple[str, ...]] = deque(maxlen=MAX_QUERIES)


class SessionLog:
    """The recent activity of the sessions this process serves."""

    def __init__(self, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._max = max_sessions
        self._lock = threading.Lock()

    def view(self, name: str, stored: Sequence[str] = ()) -> SessionView:
        """The priming of session ``name``; ``stored`` are the memories it stored lately,
        newest first (the store knows those, this log does not)."""
        with self._lock:
            session = self._sessions.get(name)
            shown = list(reversed(session.shown)) if session else []
            queries = list(session.queries) if session else []
        primed = tuple(dict.fromkeys([*shown, *stored]))
        topics = tuple(dict.fromkeys(word for terms in reversed(queries) for word in terms))
        return SessionView(name, primed, topics)

    def note(self, name: str, shown: Sequence[str], terms: Sequence[str]) -> None:
        """Record a recall of session ``name``: its best hits and its distinctive words."""
        with self._lock:
            session = self._sessions.pop(name, None) or _Session()
            self._sessions[name] = session  # most recently active last
            while len(self._sessions) > self._max:
                self._sessions.popitem(last=False)
            session.shown.extend(shown[:SHOWN_PER_RECALL])
            kept = _within(terms, MAX_TOPIC_CHARS)
            if kept:
                session.queries.append(kept)


def _within(terms: Sequence[str], chars: int) -> tuple[str, ...]:
    """The first of ``terms`` whose lengths add up to at most ``chars``."""
    kept, used = [], 0
    for term in terms:
        used += len(term)
        if used > chars:
            break
        kept.append(term)
    return tuple(kept)

"""The access history, co-access weights and replications of a store (the SQL is access.py
beside this module)."""

from __future__ import annotations

from collections.abc import Sequence

from chitta.store.access import AccessHistory, AccessRecord
from chitta.store.sqlite import access
from chitta.store.sqlite.connection import Connection, mapped_read


class History(Connection):
    """Access history, co-access weights and replications."""

    # --- access history and co-access (store/access.py buffers them) ---------------------------

    def record_access(self, record: AccessRecord) -> None:
        """Buffer one recall's accesses; written in a later batch, never by this call. A
        read-only store keeps no access history: there is nowhere to write it."""
        if self.read_only is None:
            self._access.record(record)

    def flush_access(self) -> int:
        """Write the buffered access records now (one transaction); returns how many."""
        return self._access.flush()

    def access_stats(self) -> dict[str, int]:
        """Records pending, transactions written, records written (this process)."""
        return self._access.stats()

    def _write_access(self, batch: list[AccessRecord]) -> None:
        with self.transaction() as conn:
            access.write_batch(conn, batch)

    @mapped_read
    def access_history(self, ids: Sequence[str]) -> dict[str, AccessHistory]:
        """Recent access times and total access count per id, unflushed accesses included."""
        with self._mutex:
            return access.read_history(self._conn, list(ids), self._access.pending())

    @mapped_read
    def co_access(self, ids: Sequence[str]) -> dict[tuple[str, str], float]:
        """Hebbian co-access weights among ``ids``, keyed ``(smaller id, larger id)``."""
        with self._mutex:
            return access.read_co_access(self._conn, list(ids), self._access.pending())

    @mapped_read
    def co_neighbours(self, memory_id: str, limit: int = 10) -> list[tuple[str, float]]:
        """The memories most co-accessed with ``memory_id``: (id, weight), heaviest first."""
        with self._mutex:
            return [
                (o, w)
                for o, w, _ in access.read_partners(
                    self._conn, [memory_id], self._access.pending(), limit
                )[memory_id]
            ]

    @mapped_read
    def co_partners(
        self, ids: Sequence[str], limit: int = 10
    ) -> dict[str, list[tuple[str, float, int]]]:
        """Each id's ``limit`` heaviest co-access partners: (other, weight, updated at)."""
        with self._mutex:
            return access.read_partners(self._conn, list(ids), self._access.pending(), limit)

    def add_replication(self, memory_id: str, session: str, at: int) -> None:
        """Record that ``session`` stored ``memory_id`` again (a deduplicated re-remember)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO replications (memory_id, session, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (memory_id, session, at),
            )

    def replication_sessions(self, ids: Sequence[str]) -> dict[str, set[str]]:
        """The other sessions that stored each id again (ids with none are left out)."""
        found: dict[str, set[str]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for mid, session in self._query(
                f"SELECT memory_id, session FROM replications WHERE memory_id IN ({marks})", chunk
            ):
                found.setdefault(mid, set()).add(session)
        return found

    def replications(self, ids: Sequence[str]) -> list[tuple[str, str, int]]:
        """(memory id, session, time) of each replication of ``ids``, in that order."""
        found: list[tuple[str, str, int]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found += [tuple(r) for r in self._query(  # type: ignore[misc]
                "SELECT memory_id, session, created_at FROM replications "
                f"WHERE memory_id IN ({', '.join('?' * len(chunk))})", chunk)]  # fmt: skip
        return sorted(found)

    def co_access_rows(self, ids: Sequence[str]) -> list[tuple[str, str, float, int]]:
        """The co-access rows (a, b, weight, updated_at) whose ``a`` is one of ``ids``."""
        found: list[tuple[str, str, float, int]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found += [tuple(r) for r in self._query(  # type: ignore[misc]
                "SELECT a, b, weight, updated_at FROM co_access "
                f"WHERE a IN ({', '.join('?' * len(chunk))})", chunk)]  # fmt: skip
        return sorted(found)

    def put_co_access(self, rows: Sequence[tuple[str, str, float, int]]) -> None:
        """Set co-access rows as given (a copy: chitta migrate)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO co_access (a, b, weight, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (a, b) DO UPDATE SET weight = excluded.weight, "
                "updated_at = excluded.updated_at",
                rows,
            )

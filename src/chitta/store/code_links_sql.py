"""The links and the symbol history in SQL, for both backends (store/code_links.py says what
they hold; the schema is sqlite/migrations.py ``V9_CODE_LINKS`` and
postgres/code_links_schema.py ``V5_CODE_LINKS``).

:class:`SQLCodeLinks` is a part of :class:`chitta.store.code_sql.SQLCodeTables`: it uses that
class's ``_rows``, ``_sql`` and ``_write``. The history is written inside the code tables' own
file transactions (:func:`record_replace`, :func:`record_remove`), so a file's rows and its
history never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from chitta.code.model import FileExtract
from chitta.store.code_links import IndexRun, LinkState, SymbolLink

#: Ids per ``IN (…)`` list (as store/code_sql.py).
CHUNK = 500
LINK_TABLES = ("code_links", "code_history", "code_index_runs")
_LINK_COLUMNS = "realm, memory_id, symbol_id, repo, qualified, body_hash, git_commit, linked_at"
_RUN_COLUMNS = "seq, realm, repo, git_commit, at, upto"
_HISTORY_INSERT = ("INSERT INTO code_history (realm, repo, symbol_id, path, qualified, "
                   "body_hash, removed) VALUES (?, ?, ?, ?, ?, ?, ?)")  # fmt: skip


def _marks(n: int) -> str:
    return ", ".join(["?"] * n)


def _chunks(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]


def _link(row: Sequence[Any]) -> SymbolLink:
    realm, memory_id, symbol_id, repo, qualified, body_hash, commit, at = row
    return SymbolLink(realm, memory_id, symbol_id, repo, qualified, body_hash, commit, at)


def record_replace(cur: Any, sql: Callable[[str], str], realm: str, repo: str,
                   extract: FileExtract, ids: Sequence[str]) -> None:  # fmt: skip
    """Before a file's rows are replaced: a history row for each symbol of ``extract`` that
    is new or whose body changed, and a ``removed`` one for each stored symbol it lacks."""
    old = {sid: digest for sid, digest in cur.execute(sql(
        "SELECT id, body_hash FROM code_symbols WHERE realm = ? AND repo = ? AND path = ?"),
        (realm, repo, extract.path)).fetchall()}  # fmt: skip
    rows = [(realm, repo, sid, s.path, s.qualified, s.body_hash, 0)
            for sid, s in zip(ids, extract.symbols, strict=True)
            if old.get(sid) != s.body_hash]  # fmt: skip
    kept = set(ids)
    gone = [sid for sid in old if sid not in kept]
    if gone:
        rows += _removed(cur, sql, gone)
    if rows:
        cur.executemany(sql(_HISTORY_INSERT), rows)


def record_remove(cur: Any, sql: Callable[[str], str], realm: str, repo: str, path: str) -> None:
    """Before a file's rows are removed: a ``removed`` history row for each of its symbols."""
    ids = [r[0] for r in cur.execute(sql(
        "SELECT id FROM code_symbols WHERE realm = ? AND repo = ? AND path = ?"),
        (realm, repo, path)).fetchall()]  # fmt: skip
    if ids:
        cur.executemany(sql(_HISTORY_INSERT), _removed(cur, sql, ids))


def _removed(cur: Any, sql: Callable[[str], str], ids: Sequence[str]) -> list[tuple]:
    rows: list[tuple] = []
    for part in _chunks(list(ids)):
        for realm, repo, sid, path, qualified in cur.execute(sql(
                "SELECT realm, repo, id, path, qualified FROM code_symbols WHERE id IN "
                f"({_marks(len(part))})"), list(part)).fetchall():  # fmt: skip
            rows.append((realm, repo, sid, path, qualified, "", 1))
    return rows


class SQLCodeLinks:
    """:class:`chitta.store.code_links.CodeLinks`, mixed into the code tables' SQL class."""

    _rows: Callable[..., list]
    _sql: Callable[[str], str]
    _write: Callable[[], AbstractContextManager[Any]]

    def has_symbols(self, realm: str) -> bool:
        return bool(self._rows("SELECT 1 FROM code_symbols WHERE realm = ? LIMIT 1", (realm,)))

    def add_links(self, links: Sequence[SymbolLink]) -> int:
        if not links:
            return 0
        known: set[tuple[str, str, str]] = set()
        for realm in sorted({lk.realm for lk in links}):
            ids = sorted({lk.memory_id for lk in links if lk.realm == realm})
            for part in _chunks(ids):
                known |= {(realm, m, s) for m, s in self._rows(
                    "SELECT memory_id, symbol_id FROM code_links WHERE realm = ? AND "
                    f"memory_id IN ({_marks(len(part))})", [realm, *part])}  # fmt: skip
        new = {(lk.realm, lk.memory_id, lk.symbol_id): lk for lk in links}
        rows = [(lk.realm, lk.memory_id, lk.symbol_id, lk.repo, lk.qualified, lk.body_hash,
                 lk.commit, lk.linked_at)
                for key, lk in new.items() if key not in known]  # fmt: skip
        if not rows:
            return 0
        with self._write() as cur:  # a link is made once: a concurrent maker's stands
            cur.executemany(self._sql(f"INSERT INTO code_links ({_LINK_COLUMNS}) VALUES "
                                      f"({_marks(8)}) ON CONFLICT DO NOTHING"), rows)  # fmt: skip
        return len(rows)

    def _links(self, realm: str, memory_ids: Sequence[str]) -> list[SymbolLink]:
        out: list[SymbolLink] = []
        for part in _chunks(list(dict.fromkeys(memory_ids))):
            out += [_link(r) for r in self._rows(
                f"SELECT {_LINK_COLUMNS} FROM code_links WHERE realm = ? AND memory_id IN "
                f"({_marks(len(part))}) ORDER BY memory_id, qualified, symbol_id",
                [realm, *part])]  # fmt: skip
        return out

    def links_of(self, realm: str, memory_ids: Sequence[str]) -> list[LinkState]:
        links = self._links(realm, memory_ids)
        if not links:
            return []
        now: dict[str, tuple[str, str, str | None, int]] = {}
        for part in _chunks(sorted({lk.symbol_id for lk in links})):
            for sid, digest, path, commit, at in self._rows(
                    "SELECT id, body_hash, path, git_commit, indexed_at FROM code_symbols "
                    f"WHERE id IN ({_marks(len(part))})", list(part)):  # fmt: skip
                now[sid] = (digest, path, commit, int(at))
        return [LinkState(lk, *now.get(lk.symbol_id, (None, None, None, None))) for lk in links]

    def links_as_of(self, realm: str, memory_ids: Sequence[str],
                    runs: dict[str, IndexRun]) -> list[LinkState]:  # fmt: skip
        links = [lk for lk in self._links(realm, memory_ids) if lk.repo in runs]
        out: list[LinkState] = []
        for repo in sorted({lk.repo for lk in links}):
            run = runs[repo]
            mine = [lk for lk in links if lk.repo == repo]
            then: dict[str, tuple[str, str, int]] = {}
            for part in _chunks(sorted({lk.symbol_id for lk in mine})):
                # By sequence: the newest row up to the run wins.
                for sid, digest, path, removed in self._rows(
                        "SELECT symbol_id, body_hash, path, removed FROM code_history WHERE "
                        f"realm = ? AND symbol_id IN ({_marks(len(part))}) AND seq <= ? "
                        "ORDER BY seq", [realm, *part, run.upto]):  # fmt: skip
                    then[sid] = (digest, path, removed)
            for lk in mine:
                digest, path, removed = then.get(lk.symbol_id, (None, None, 1))
                gone = bool(removed) or digest is None
                out.append(LinkState(lk, None if gone else digest, None if gone else path,
                                     run.commit, run.at))  # fmt: skip
        return out

    def linked_memories(self, realm: str, symbol_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for part in _chunks(list(dict.fromkeys(symbol_ids))):
            for sid, mid in self._rows(
                    "SELECT symbol_id, memory_id FROM code_links WHERE realm = ? AND symbol_id "
                    f"IN ({_marks(len(part))}) ORDER BY symbol_id, memory_id",
                    [realm, *part]):  # fmt: skip
                out.setdefault(sid, []).append(mid)
        return out

    def record_index(self, realm: str, repo: str, commit: str | None, at: int) -> IndexRun:
        with self._write() as cur:
            upto = cur.execute(self._sql(
                "SELECT COALESCE(MAX(seq), 0) FROM code_history WHERE realm = ? AND repo = ?"),
                (realm, repo)).fetchall()[0][0]  # fmt: skip
            cur.execute(self._sql("INSERT INTO code_index_runs (realm, repo, git_commit, at, "
                                  "upto) VALUES (?, ?, ?, ?, ?)"),
                        (realm, repo, commit, at, upto))  # fmt: skip
        return self.index_runs(realm, repo)[-1]

    def index_runs(self, realm: str, repo: str | None = None) -> list[IndexRun]:
        where, params = "realm = ?", [realm]
        if repo is not None:
            where, params = where + " AND repo = ?", [realm, repo]
        rows = self._rows(f"SELECT {_RUN_COLUMNS} FROM code_index_runs WHERE {where} "
                          "ORDER BY seq", params)  # fmt: skip
        return [IndexRun(int(s), r, rp, c, int(at), int(up)) for s, r, rp, c, at, up in rows]

    def history_as_of(self, realm: str, run: IndexRun) -> dict[str, tuple[str, str, str]]:
        table: dict[str, tuple[str, str, str] | None] = {}
        for sid, path, qualified, digest, removed in self._rows(
                "SELECT symbol_id, path, qualified, body_hash, removed FROM code_history "
                "WHERE realm = ? AND repo = ? AND seq <= ? ORDER BY seq",
                (realm, run.repo, run.upto)):  # fmt: skip
            table[sid] = None if removed else (path, qualified, digest)
        return {sid: row for sid, row in table.items() if row is not None}

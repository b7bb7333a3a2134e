"""The code tables in SQL, for both backends (store/code.py says what they hold).

The schema is each backend's own migration (sqlite/migrations.py V7, V8 and V11,
postgres/code_schema.py V3, V4 and V7); the statements here are the same on both: written
with ``?`` placeholders, which the PostgreSQL backend reads as ``%s``. A backend hands in how
it reads (the rows of one statement) and how it writes (a transaction yielding something
with ``execute`` and ``executemany``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

from chitta.code.model import Base, Callsite, FileExtract, Import, Symbol
from chitta.store.code import (
    MAX_DEPTH,
    PENDING,
    RESOLVED,
    STATES,
    UNRESOLVED,
    CallEdge,
    EdgeKey,
    Resolution,
    StoredCallsite,
    StoredFile,
    StoredSymbol,
    caller_ids,
    callsite_key,
    prefix_bound,
    symbol_ids,
)
from chitta.store.code_links_sql import SQLCodeLinks, record_remove, record_replace
from chitta.store.code_vectors import VECTOR_TABLES, SymbolVectorsSQL

Read = Callable[[str, Sequence[object]], list]
Write = Callable[[], AbstractContextManager[Any]]
#: Ids per ``IN (…)`` list: far under either backend's limit of parameters.
CHUNK = 500
#: Rows a dotted name reads (its last part matched, its parents by ``_HEAD_FILTER``) before
#: the exact test on their qualified names.
DOTTED_READ = 5000
#: What a dotted name's parents ask of a row's qualified name, in SQL: it holds them between
#: dots (``?``: :func:`_head_pattern`), in ASCII lower case. A superset of the exact test made
#: after on the rows read (so the qualified names of every other same-named symbol are never
#: read into Python): SQL's ``lower`` folds ASCII only, and of the characters Python lowers
#: to an ASCII one only the Kelvin sign can stand in such parents (U+0130 lowers to ``i``
#: and a combining dot), so it is folded first.
_HEAD_FILTER = "'.' || lower(replace(qualified, '\u212a', 'k')) LIKE ? ESCAPE '\\'"
TABLES = ("code_files", "code_symbols", "code_callsites", "code_imports", "code_bases")

_SYMBOL_COLUMNS = ("id, realm, repo, path, name, qualified, kind, signature, start_line, "
                   "end_line, parent, language, doc, body_hash, indexed_at, "
                   "git_commit")  # fmt: skip
_CALL_COLUMNS = ("id, realm, repo, path, caller, name, form, receiver, qualifier, line, "
                 "caller_id, state, target_id, candidates")  # fmt: skip
_FILE_COLUMNS = ("realm, repo, path, language, content_hash, lines, parse_errors, skipped, "
                 "indexed_at, git_commit")  # fmt: skip


def _marks(n: int) -> str:
    return ", ".join(["?"] * n)


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def _within(column: str, values: Sequence[str] | None) -> Iterator[tuple[str, tuple[str, ...]]]:
    """`` AND column IN (…)`` and its values, a chunk of ``values`` at a time; for ``None``
    (no limit) once, empty; for no values, never (nothing is within none)."""
    if values is None:
        yield "", ()
        return
    for part in _chunks(sorted(set(values))):
        yield f" AND {column} IN ({_marks(len(part))})", tuple(part)


def _symbol(row: Sequence[Any]) -> StoredSymbol:
    (sid, realm, repo, path, name, qualified, kind, signature, start, end, parent, language,
     doc, body_hash, at, commit) = row  # fmt: skip
    symbol = Symbol(name=name, qualified=qualified, kind=kind, signature=signature, path=path,
                    start_line=start, end_line=end, parent=parent, language=language, doc=doc,
                    body_hash=body_hash)  # fmt: skip
    return StoredSymbol(sid, realm, repo, symbol, at, commit)


def _callsite(row: Sequence[Any]) -> StoredCallsite:
    (cid, realm, repo, path, caller, name, form, receiver, qualifier, line, caller_id, state,
     target, candidates) = row  # fmt: skip
    call = Callsite(caller=caller, name=name, form=form, receiver=receiver,
                    qualifier=qualifier, path=path, line=line)  # fmt: skip
    return StoredCallsite(cid, realm, repo, call, caller_id, state, target,
                          tuple(candidates.split()))  # fmt: skip


class SQLCodeTables(SymbolVectorsSQL, SQLCodeLinks):
    """:class:`chitta.store.code.CodeTables` over a backend's ``read`` and ``write`` (the
    links and the symbol history: store/code_links_sql.py)."""

    def __init__(
        self,
        read: Read,
        write: Write,
        placeholder: str = "?",
        *,
        maintain: Callable[[str], None] | None = None,
    ) -> None:
        self._read_raw, self._write = read, write
        self._placeholder = placeholder
        self._maintain = maintain  # a statement run outside any transaction (PostgreSQL)

    def _sql(self, sql: str) -> str:
        return sql if self._placeholder == "?" else sql.replace("?", self._placeholder)

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list:
        return self._read_raw(self._sql(sql), list(params))

    def refresh_statistics(self) -> None:
        # PostgreSQL plans by its statistics: on tables just filled, before autovacuum has
        # sampled them, it guesses a few rows a name and reads a lookup's rows through a
        # bitmap heap scan and a sort instead of the covering index; and until a vacuum marks
        # the new pages all-visible, an index-only scan still visits the table for each row
        # (docs/benchmarks.md). SQLite plans by the schema alone, and is left so: an ANALYZE
        # there would change the plans of every statement, all of them measured without one.
        if self._maintain is not None:
            self._maintain(f"VACUUM (ANALYZE) {', '.join(TABLES)}")

    # --- writes -----------------------------------------------------------------------------

    def replace_file(
        self, realm: str, repo: str, extract: FileExtract, commit: str | None, at: int
    ) -> list[str]:
        return self.replace_files(realm, repo, [extract], commit, at)[0]

    def replace_files(
        self, realm: str, repo: str, extracts: Sequence[FileExtract], commit: str | None, at: int
    ) -> list[list[str]]:
        ids = [symbol_ids(realm, repo, e.symbols) for e in extracts]
        with self._write() as cur:
            for extract, symbols in zip(extracts, ids, strict=True):
                record_replace(cur, self._sql, realm, repo, extract, symbols)
                self._delete(cur, realm, repo, extract.path)
                self._insert(cur, realm, repo, extract, symbols, commit, at)
        return ids

    def _insert(
        self,
        cur: Any,
        realm: str,
        repo: str,
        extract: FileExtract,
        ids: Sequence[str],
        commit: str | None,
        at: int,
    ) -> None:
        callers = caller_ids(extract.symbols, ids, extract.callsites)
        seen: dict[str, int] = {}
        calls = []
        for c, caller in zip(extract.callsites, callers, strict=True):
            key = callsite_key(realm, repo, c)
            n = seen[key] = seen.get(key, -1) + 1  # equal calls on a line: one key, own ids
            calls.append((f"{key}.{n}", realm, repo, c.path, c.caller, c.name, c.form,
                          c.receiver, c.qualifier, c.line, caller, PENDING, None, "",
                          key))  # fmt: skip
        cur.execute(self._sql(f"INSERT INTO code_files ({_FILE_COLUMNS}) VALUES ({_marks(10)})"),
                    (realm, repo, extract.path, extract.language, extract.content_hash,
                     extract.lines, extract.parse_errors, extract.skipped, at,
                     commit))  # fmt: skip
        if extract.symbols:
            cur.executemany(
                self._sql(f"INSERT INTO code_symbols ({_SYMBOL_COLUMNS}, lname) VALUES "
                          f"({_marks(17)})"),
                [(sid, realm, repo, s.path, s.name, s.qualified, s.kind, s.signature,
                  s.start_line, s.end_line, s.parent, s.language, s.doc, s.body_hash, at,
                  commit, s.name.lower())
                 for sid, s in zip(ids, extract.symbols, strict=True)],
            )  # fmt: skip
        if calls:
            cur.executemany(self._sql(f"INSERT INTO code_callsites ({_CALL_COLUMNS}, key) "
                                      f"VALUES ({_marks(15)})"), calls)  # fmt: skip
        if extract.imports:
            cur.executemany(
                self._sql("INSERT INTO code_imports (realm, repo, path, module, name, "
                          f"alias, line) VALUES ({_marks(7)})"),
                [(realm, repo, i.path, i.module, i.name, i.alias, i.line)
                 for i in extract.imports],
            )  # fmt: skip
        if extract.bases:
            cur.executemany(
                self._sql("INSERT INTO code_bases (realm, repo, path, child, base, line) "
                          f"VALUES ({_marks(6)})"),
                [(realm, repo, b.path, b.child, b.base, b.line) for b in extract.bases],
            )  # fmt: skip

    def _delete(self, cur: Any, realm: str, repo: str, path: str) -> None:
        for table in (*TABLES, *VECTOR_TABLES):
            cur.execute(self._sql(f"DELETE FROM {table} WHERE realm = ? AND repo = ? "
                                  "AND path = ?"), (realm, repo, path))  # fmt: skip

    def remove_file(self, realm: str, repo: str, path: str) -> bool:
        return self.remove_files(realm, repo, [path]) == 1

    def remove_files(self, realm: str, repo: str, paths: Sequence[str]) -> int:
        known = [p for p in paths if self.file(realm, repo, p) is not None]
        if known:
            with self._write() as cur:
                for path in known:
                    record_remove(cur, self._sql, realm, repo, path)
                    self._delete(cur, realm, repo, path)
        return len(known)

    def set_resolutions(self, realm: str, repo: str, resolutions: Sequence[Resolution]) -> int:
        # The targets' files only (by the file index): a re-index answers a few calls.
        files = [t.path for r in resolutions for t in r.targets]  # _within reads each once
        ids = {(path, q, kind, start): sid for on, part in _within("path", files)
               for sid, path, q, kind, start in self._rows(
                   "SELECT id, path, qualified, kind, start_line FROM code_symbols WHERE "
                   f"realm = ? AND repo = ?{on}", (realm, repo, *part))}  # fmt: skip
        rows = []
        for r in resolutions:
            if r.state not in STATES:
                raise ValueError(f"unknown resolution state {r.state!r}")
            found = [ids[k] for t in r.targets
                     if (k := (t.path, t.qualified, t.kind, t.start_line)) in ids]  # fmt: skip
            state = UNRESOLVED if r.state == RESOLVED and not found else r.state
            target = found[0] if state == RESOLVED else None
            candidates = " ".join(found) if state != RESOLVED else ""
            rows.append((state, target, candidates, realm, callsite_key(realm, repo, r.callsite)))
        if not rows:
            return 0
        with self._write() as cur:
            update = "UPDATE code_callsites SET state = ?, target_id = ?, candidates = ? "
            cur.executemany(self._sql(update + "WHERE realm = ? AND key = ?"), rows)
        return len(rows)

    def mark_pending(
        self, realm: str, repo: str, names: Sequence[str], paths: Sequence[str] | None = None
    ) -> int:
        changed = 0
        sql = ("UPDATE code_callsites SET state = ?, target_id = NULL, candidates = '' "
               "WHERE realm = ? AND repo = ? AND state <> ?")  # fmt: skip
        with self._write() as cur:
            for named, chunk in _within("name", names):
                # In some files, by the file index (a scan of the repository's calls else).
                for on, files in _within("path", paths):
                    done = cur.execute(
                        self._sql(sql + named + on), (PENDING, realm, repo, PENDING, *chunk, *files)
                    )
                    # (SQLite's connection and psycopg's cursor both answer execute with a
                    # cursor.)
                    changed += max(done.rowcount, 0)
        return changed

    # --- reads ------------------------------------------------------------------------------

    def files(self, realm: str, repo: str) -> dict[str, str]:
        rows = self._rows("SELECT path, content_hash FROM code_files WHERE realm = ? AND "
                          "repo = ?", (realm, repo))  # fmt: skip
        return {path: digest for path, digest in rows}

    def file(self, realm: str, repo: str, path: str) -> StoredFile | None:
        rows = self._rows(f"SELECT {_FILE_COLUMNS} FROM code_files WHERE realm = ? AND "
                          "repo = ? AND path = ?", (realm, repo, path))  # fmt: skip
        return StoredFile(*rows[0]) if rows else None

    def repos(self, realm: str) -> list[str]:
        rows = self._rows("SELECT DISTINCT repo FROM code_files WHERE realm = ? ORDER BY repo",
                          (realm,))  # fmt: skip
        return [r[0] for r in rows]

    def find_symbols(
        self,
        realm: str,
        name: str,
        *,
        prefix: bool = False,
        kinds: Sequence[str] = (),
        limit: int = 20,
    ) -> list[StoredSymbol]:
        wanted = name.strip().replace("::", ".").strip(".")
        if not wanted or limit < 1:
            return []
        head, _, last = wanted.lower().rpartition(".")
        exact = wanted.rpartition(".")[2]
        where, params = ["realm = ?"], [realm]
        if kinds:
            where.append(f"kind IN ({_marks(len(kinds))})")
            params += list(kinds)
        if head and head.isascii():
            where.append(_HEAD_FILTER)
            params.append(_head_pattern(head))
        found: list[StoredSymbol] = []
        left = DOTTED_READ if head else limit
        for read in _reads(last, exact, prefix=prefix, dotted=bool(head)):
            rows = self._through_index(read, where, params, left)
            found += _ending_in([_symbol(r) for r in rows], head)
            left -= len(rows)
            if left <= 0 or len(found) >= limit:
                break
        return found[:limit]

    def _through_index(
        self, read: _Read, where: Sequence[str], params: Sequence[object], limit: int
    ) -> list:
        """The rows of at most ``limit`` symbols that ``where`` and the ``read``'s terms hold,
        in its order. They are chosen on the name index alone (``code_symbols_find`` holds
        every column a lookup filters and orders on): only the rows kept are read from the
        table."""
        columns = ", ".join(f"s.{c}" for c in _SYMBOL_COLUMNS.split(", "))
        outer = ", ".join(f"k.{c}" for c in read.order.split(", "))
        return self._rows(f"SELECT {columns} FROM (SELECT id, {read.keys} FROM code_symbols "
                          f"WHERE {' AND '.join([*where, read.terms])} ORDER BY {read.order} "
                          f"LIMIT ?) AS k JOIN code_symbols AS s ON s.id = k.id ORDER BY {outer}",
                          [*read.key_values, *params, *read.values, limit])  # fmt: skip

    def symbols_by_id(self, ids: Sequence[str]) -> dict[str, StoredSymbol]:
        out: dict[str, StoredSymbol] = {}
        for part in _chunks(list(dict.fromkeys(ids))):
            for row in self._rows(f"SELECT {_SYMBOL_COLUMNS} FROM code_symbols WHERE id IN "
                                  f"({_marks(len(part))})", part):  # fmt: skip
                out[row[0]] = _symbol(row)
        return out

    def symbols_in(self, realm: str, repo: str, path: str) -> list[StoredSymbol]:
        rows = self._rows(f"SELECT {_SYMBOL_COLUMNS} FROM code_symbols WHERE realm = ? AND "
                          "repo = ? AND path = ? ORDER BY start_line, id",
                          (realm, repo, path))  # fmt: skip
        return [_symbol(r) for r in rows]

    def extracts(self, realm: str, repo: str) -> list[FileExtract]:
        scope = (realm, repo)
        symbols: dict[str, list[Symbol]] = {}
        for row in self._rows(f"SELECT {_SYMBOL_COLUMNS} FROM code_symbols WHERE realm = ? "
                              "AND repo = ? ORDER BY path, start_line, id", scope):  # fmt: skip
            s = _symbol(row).symbol
            symbols.setdefault(s.path, []).append(s)
        calls: dict[str, list[Callsite]] = {}
        for c in self.callsites(realm, repo):
            calls.setdefault(c.callsite.path, []).append(c.callsite)
        imports: dict[str, list[Import]] = {}
        for module, name, alias, path, line in self._rows(
                "SELECT module, name, alias, path, line FROM code_imports WHERE realm = ? AND "
                "repo = ? ORDER BY path, line", scope):  # fmt: skip
            imports.setdefault(path, []).append(Import(module, name, alias, path, line))
        bases: dict[str, list[Base]] = {}
        for child, base, path, line in self._rows(
                "SELECT child, base, path, line FROM code_bases WHERE realm = ? AND repo = ? "
                "ORDER BY path, line", scope):  # fmt: skip
            bases.setdefault(path, []).append(Base(child, base, path, line))
        out = []
        for f in sorted(self._stored_files(realm, repo), key=lambda f: f.path):
            p = f.path
            out.append(FileExtract(
                path=p, language=f.language, content_hash=f.content_hash, lines=f.lines,
                symbols=tuple(symbols.get(p, ())), callsites=tuple(calls.get(p, ())),
                imports=tuple(imports.get(p, ())), bases=tuple(bases.get(p, ())),
                parse_errors=f.parse_errors, skipped=f.skipped))  # fmt: skip
        return out

    def _stored_files(self, realm: str, repo: str) -> list[StoredFile]:
        rows = self._rows(f"SELECT {_FILE_COLUMNS} FROM code_files WHERE realm = ? AND "
                          "repo = ?", (realm, repo))  # fmt: skip
        return [StoredFile(*r) for r in rows]

    def callsites(
        self,
        realm: str,
        repo: str | None = None,
        *,
        states: Sequence[str] = (),
        paths: Sequence[str] | None = None,
    ) -> list[StoredCallsite]:
        where, params = ["realm = ?"], [realm]
        if repo is not None:
            where.append("repo = ?")
            params.append(repo)
        if states:
            where.append(f"state IN ({_marks(len(states))})")
            params += list(states)
        out = []
        for on, part in _within("path", paths):
            rows = self._rows(f"SELECT {_CALL_COLUMNS} FROM code_callsites WHERE "
                              f"{' AND '.join(where)}{on} ORDER BY repo, path, line, id",
                              [*params, *part])  # fmt: skip
            out += [_callsite(r) for r in rows]
        return out

    def callers(
        self, realm: str, symbol_id: str, depth: int = 1, limit: int = 100
    ) -> tuple[list[CallEdge], bool]:
        return self._walk(realm, symbol_id, depth, limit, backwards=True)

    def callees(
        self, realm: str, symbol_id: str, depth: int = 1, limit: int = 100
    ) -> tuple[list[CallEdge], bool]:
        return self._walk(realm, symbol_id, depth, limit, backwards=False)

    def _walk(
        self, realm: str, start: str, depth: int, limit: int, *, backwards: bool
    ) -> tuple[list[CallEdge], bool]:
        """Breadth first over resolved callsites, each symbol expanded once; stops at
        ``depth`` levels or ``limit`` edges (the flag says the limit cut).

        The order is by an expression (``repo || ''``), not the file index's columns: SQLite
        would otherwise read the realm's calls in that index's order to spare a sort (21 ms
        at 100,000 calls) rather than look the few ends up in their own index (0.1 ms)."""
        match, onward = ("target_id", 0) if backwards else ("caller_id", 2)
        edges: list[CallEdge] = []
        frontier, seen = [start], {start}
        for level in range(1, max(1, min(depth, MAX_DEPTH)) + 1):
            following: list[str] = []
            for part in _chunks(frontier):
                room = limit - len(edges)
                rows = self._rows(
                    "SELECT caller_id, caller, target_id, path, line FROM code_callsites "
                    f"WHERE realm = ? AND state = ? AND {match} IN ({_marks(len(part))}) "
                    "ORDER BY repo || '', path, line, id LIMIT ?",
                    [realm, RESOLVED, *part, room + 1])  # fmt: skip
                for row in rows[:room]:
                    edges.append(CallEdge(row[0], row[1], row[2], row[3], row[4], level))
                    nxt = row[onward]
                    if nxt is not None and nxt not in seen:
                        seen.add(nxt)
                        following.append(nxt)
                if len(rows) > room:
                    return edges, True
            frontier = following
            if not frontier:
                break
        return edges, False

    def resolution_counts(
        self, realm: str, repo: str | None = None, paths: Sequence[str] | None = None
    ) -> dict[str, int]:
        where, params = "realm = ?", [realm]
        if repo is not None:
            where, params = where + " AND repo = ?", [realm, repo]
        out = {state: 0 for state in STATES}
        for on, part in _within("path", paths):
            for state, n in self._rows(f"SELECT state, COUNT(*) FROM code_callsites WHERE "
                                       f"{where}{on} GROUP BY state",
                                       [*params, *part]):  # fmt: skip
                out[state] = out.get(state, 0) + int(n)
        return out

    def counts(self, realm: str | None = None) -> dict[str, int]:
        where, params = ("WHERE realm = ?", [realm]) if realm is not None else ("", [])
        return {
            table.removeprefix("code_"): int(
                self._rows(f"SELECT COUNT(*) FROM {table} {where}", params)[0][0]
            )
            for table in TABLES
        }

    # --- the triplets made of edges (code/edges.py) -------------------------------------------

    def edge_triplets(
        self, realm: str, repo: str, subjects: Sequence[str] | None = None
    ) -> dict[EdgeKey, str]:
        sql = ("SELECT subject, predicate, object, triplet_id FROM code_triplets WHERE "
               "realm = ? AND repo = ?")  # fmt: skip
        # The table's key begins (realm, repo, subject): a few subjects, a few probes.
        rows = [row for on, part in _within("subject", subjects)
                for row in self._rows(sql + on, (realm, repo, *part))]  # fmt: skip
        return {(s, p, o): tid for s, p, o, tid in rows}

    def set_edge_triplets(
        self, realm: str, repo: str, add: Mapping[EdgeKey, str], drop: Sequence[EdgeKey]
    ) -> None:
        if not add and not drop:
            return
        with self._write() as cur:
            if drop:
                cur.executemany(
                    self._sql("DELETE FROM code_triplets WHERE realm = ? AND repo = ? AND "
                              "subject = ? AND predicate = ? AND object = ?"),
                    [(realm, repo, *key) for key in drop])  # fmt: skip
            if add:
                cur.executemany(
                    self._sql("INSERT INTO code_triplets (realm, repo, subject, predicate, "
                              f"object, triplet_id) VALUES ({_marks(6)})"),
                    [(realm, repo, *key, tid) for key, tid in add.items()])  # fmt: skip


def _head_pattern(head: str) -> str:
    """The LIKE pattern of :data:`_HEAD_FILTER` for the lower-cased parents ``head``: its
    wildcards taken literally."""
    literal = head.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%.{literal}.%"


class _Read(NamedTuple):
    """One read of the name index by :meth:`SQLCodeTables.find_symbols`."""

    keys: str  # what it is ordered by, besides the id, selected from the index
    key_values: list[object]  # the values of the ``?`` in ``keys``
    terms: str  # its terms on the name
    values: list[object]  # theirs
    order: str


#: Where a symbol stands in its name's answers, after its case: the index's order.
_PLACE = "repo, path, start_line"


def _reads(last: str, exact: str, *, prefix: bool, dotted: bool) -> list[_Read]:
    """find_symbols' reads of the name index, in turn: the symbols named ``exact`` first,
    then the others whose lower-cased name is (or with ``prefix`` starts with) ``last``. Each
    read but a dotted name's is in the index's own order, so it stops at its limit (one read
    ordered by ``name = exact`` first sorts every name matched before taking the first few);
    a dotted exact name is one read, its own case first by a sort: its parents' test reads
    all the name's entries anyway, and keeps few to sort."""
    if dotted and not prefix:
        return [_Read(f"CASE WHEN name = ? THEN 0 ELSE 1 END AS own, {_PLACE}", [exact],
                      "lname = ?", [last], f"own, {_PLACE}, id")]  # fmt: skip
    own = _Read(_PLACE, [], "lname = ? AND name = ?", [last, exact], f"{_PLACE}, id")
    if prefix:
        return [own, _Read(f"lname, {_PLACE}", [], "lname >= ? AND lname < ? AND name <> ?",
                           [last, prefix_bound(last), exact], f"lname, {_PLACE}, id")]  # fmt: skip
    return [own, _Read(_PLACE, [], "lname = ? AND name <> ?", [last, exact], f"{_PLACE}, id")]


def _ending_in(symbols: list[StoredSymbol], head: str) -> list[StoredSymbol]:
    """The symbols whose qualified parents end in the lower-cased parents ``head`` (all of
    them when ``head`` is empty)."""
    if not head:
        return symbols
    tail = "." + head
    return [s for s in symbols if ("." + _parents(s.symbol)).endswith(tail)]


def _parents(symbol: Symbol) -> str:
    """The symbol's qualified name without its own name, lower case."""
    q = symbol.qualified.lower()
    own = symbol.name.lower()
    return q[: -len(own) - 1] if q.endswith("." + own) else q.rpartition(".")[0]

"""Versioned, forward-only schema migrations of a store file.

Each entry of :data:`MIGRATIONS` takes the schema from version ``i`` to ``i + 1`` and is
applied in its own transaction; ``meta.schema_version`` records where a file stands. A file
from a newer chitta is refused rather than guessed at.
"""

from __future__ import annotations

import re
import sqlite3

from chitta.errors import SchemaTooNew, StoreCorrupt
from chitta.store.triplets import entity_key, predicate_key

V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memories (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    content       TEXT NOT NULL,
    realm         TEXT NOT NULL,
    agent_id      TEXT NOT NULL DEFAULT '',
    channel       TEXT NOT NULL DEFAULT '',
    tags          TEXT NOT NULL DEFAULT '',
    source        TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    event_time    INTEGER,
    mu            REAL NOT NULL,
    sigma_sq      REAL NOT NULL,
    n             INTEGER NOT NULL DEFAULT 0,
    tau           REAL NOT NULL,
    strength      REAL NOT NULL,
    tier          TEXT NOT NULL,
    access_count  INTEGER NOT NULL DEFAULT 0,
    last_accessed INTEGER,
    decayed_at    INTEGER,
    supersedes    TEXT,
    superseded_by TEXT,
    truncated     INTEGER NOT NULL DEFAULT 0,
    deleted_at    INTEGER
);
CREATE INDEX memories_scope ON memories (realm, agent_id, channel);
CREATE TABLE embeddings (
    memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    vector    BLOB NOT NULL
);
-- External-content FTS5 index over content and tags, kept in step by triggers.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, tags, content = 'memories', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags)
    VALUES ('delete', old.rowid, old.content, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF content, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, tags)
    VALUES ('delete', old.rowid, old.content, old.tags);
    INSERT INTO memories_fts (rowid, content, tags) VALUES (new.rowid, new.content, new.tags);
END;
"""

V2 = """
CREATE TABLE episodes (
    id         TEXT PRIMARY KEY,
    realm      TEXT NOT NULL,
    title      TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    source     TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);
CREATE INDEX episodes_realm ON episodes (realm, started_at);
ALTER TABLE memories ADD COLUMN episode_id TEXT REFERENCES episodes (id) ON DELETE SET NULL;
CREATE TABLE triplets (
    id             TEXT PRIMARY KEY,
    realm          TEXT NOT NULL,
    subject        TEXT NOT NULL,
    predicate      TEXT NOT NULL,
    object         TEXT NOT NULL,
    weight         REAL NOT NULL DEFAULT 1.0,
    valid_from     INTEGER NOT NULL,
    invalidated_at INTEGER,
    source_memory  TEXT REFERENCES memories (id) ON DELETE SET NULL,
    created_at     INTEGER NOT NULL
);
CREATE INDEX triplets_subject ON triplets (realm, subject);
CREATE INDEX triplets_object ON triplets (realm, object);
"""

# Access history (ACT-R), co-access weights (Hebbian) and replications (distinct sessions that
# stored the same memory); see docs/recall.md. Only the last 32 accesses of a memory are kept:
# older ones enter the ACT-R activation through access_count (Petrov's approximation).
V3 = """
CREATE TABLE access_log (
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at        INTEGER NOT NULL
);
CREATE INDEX access_log_memory ON access_log (memory_id, at);
CREATE TABLE co_access (
    a          TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b          TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    weight     REAL NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
) WITHOUT ROWID;
CREATE INDEX co_access_b ON co_access (b);
CREATE TABLE replications (
    memory_id  TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    session    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (memory_id, session)
) WITHOUT ROWID;
"""

# The turns around a memory in its episode, and a session's newest memories, are read at
# every recall by the ctx lane: indexed, so the lane costs a few lookups, not a scan.
V4 = """
CREATE INDEX memories_episode ON memories (episode_id, id) WHERE episode_id IS NOT NULL;
CREATE INDEX memories_session ON memories (json_extract(source, '$.session'), id)
    WHERE json_extract(source, '$.session') IS NOT NULL;
"""

# Triplets matched by normalised keys (store/triplets.py), indexed so that following one node's
# edges reads them heaviest first and stops at a bound; and entity aliases per realm. The keys
# of existing triplets are filled by the same Python functions new writes use.
V5 = """
ALTER TABLE triplets ADD COLUMN subject_key TEXT NOT NULL DEFAULT '';
ALTER TABLE triplets ADD COLUMN predicate_key TEXT NOT NULL DEFAULT '';
ALTER TABLE triplets ADD COLUMN object_key TEXT NOT NULL DEFAULT '';
UPDATE triplets SET subject_key = chitta_entity_key(subject),
    predicate_key = chitta_predicate_key(predicate), object_key = chitta_entity_key(object);
DROP INDEX triplets_subject;
DROP INDEX triplets_object;
CREATE INDEX triplets_out ON triplets (realm, subject_key, predicate_key, weight);
CREATE INDEX triplets_from ON triplets (realm, subject_key, weight);
CREATE INDEX triplets_in ON triplets (realm, object_key, weight);
CREATE INDEX triplets_pair ON triplets (realm, subject_key, object_key);
CREATE INDEX triplets_source ON triplets (source_memory, weight) WHERE source_memory IS NOT NULL;
CREATE INDEX triplets_sourced ON triplets (realm) WHERE source_memory IS NOT NULL;
CREATE TABLE entity_aliases (
    realm         TEXT NOT NULL,
    alias_key     TEXT NOT NULL,
    canonical_key TEXT NOT NULL,
    alias         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (realm, alias_key)
) WITHOUT ROWID;
CREATE INDEX entity_aliases_canonical ON entity_aliases (realm, canonical_key);
"""

# FTS5's vocabulary of the keyword index, one row per occurrence of a term (term, row, column,
# offset): the keyword search reads which memories hold a term, and how often, from it and
# scores them with the realm's own statistics (keywords.py). A view of the index kept
# by FTS5 itself: nothing to fill, nothing stored.
V6 = """
CREATE VIRTUAL TABLE memories_fts_instance USING fts5vocab (memories_fts, instance);
"""

# Code intelligence (store/code.py): the files, symbols, callsites (with their resolution),
# imports and bases of indexed repositories, per realm. A symbol is found by its lower-cased
# name (exact or a prefix: one range of the index) and walked to its callers and callees by
# the resolved callsites' ends.
V7 = """
CREATE TABLE code_files (
    realm        TEXT NOT NULL,
    repo         TEXT NOT NULL,
    path         TEXT NOT NULL,
    language     TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    lines        INTEGER NOT NULL,
    parse_errors INTEGER NOT NULL DEFAULT 0,
    skipped      TEXT NOT NULL DEFAULT '',
    indexed_at   INTEGER NOT NULL,
    git_commit   TEXT,
    PRIMARY KEY (realm, repo, path)
) WITHOUT ROWID;
CREATE TABLE code_symbols (
    id         TEXT PRIMARY KEY,
    realm      TEXT NOT NULL,
    repo       TEXT NOT NULL,
    path       TEXT NOT NULL,
    name       TEXT NOT NULL,
    lname      TEXT NOT NULL,
    qualified  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    signature  TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    parent     TEXT,
    language   TEXT NOT NULL,
    doc        TEXT NOT NULL DEFAULT '',
    body_hash  TEXT NOT NULL DEFAULT '',
    indexed_at INTEGER NOT NULL,
    git_commit TEXT
);
CREATE INDEX code_symbols_name ON code_symbols (realm, lname);
CREATE INDEX code_symbols_file ON code_symbols (realm, repo, path, start_line);
CREATE TABLE code_callsites (
    id         TEXT PRIMARY KEY,
    realm      TEXT NOT NULL,
    repo       TEXT NOT NULL,
    path       TEXT NOT NULL,
    caller     TEXT NOT NULL,
    name       TEXT NOT NULL,
    form       TEXT NOT NULL,
    receiver   TEXT,
    qualifier  TEXT,
    line       INTEGER NOT NULL,
    key        TEXT NOT NULL,
    caller_id  TEXT,
    state      TEXT NOT NULL DEFAULT 'pending',
    target_id  TEXT,
    candidates TEXT NOT NULL DEFAULT ''
);
CREATE INDEX code_callsites_file ON code_callsites (realm, repo, path, line);
CREATE INDEX code_callsites_key ON code_callsites (realm, key);
CREATE INDEX code_callsites_target ON code_callsites (realm, target_id)
    WHERE target_id IS NOT NULL;
CREATE INDEX code_callsites_caller ON code_callsites (realm, caller_id)
    WHERE caller_id IS NOT NULL;
CREATE TABLE code_imports (
    realm  TEXT NOT NULL,
    repo   TEXT NOT NULL,
    path   TEXT NOT NULL,
    module TEXT NOT NULL,
    name   TEXT,
    alias  TEXT,
    line   INTEGER NOT NULL
);
CREATE INDEX code_imports_file ON code_imports (realm, repo, path);
CREATE TABLE code_bases (
    realm TEXT NOT NULL,
    repo  TEXT NOT NULL,
    path  TEXT NOT NULL,
    child TEXT NOT NULL,
    base  TEXT NOT NULL,
    line  INTEGER NOT NULL
);
CREATE INDEX code_bases_file ON code_bases (realm, repo, path);
"""

# The triplets the code index made of a repository's edges (code/edges.py), by the edge's
# keys: what a re-index compares its edges with, to invalidate the ones gone and add the new.
V8 = """
CREATE TABLE code_triplets (
    realm      TEXT NOT NULL,
    repo       TEXT NOT NULL,
    subject    TEXT NOT NULL,
    predicate  TEXT NOT NULL,
    object     TEXT NOT NULL,
    triplet_id TEXT NOT NULL,
    PRIMARY KEY (realm, repo, subject, predicate, object)
) WITHOUT ROWID;
"""

# Symbol search (code/search.py): each symbol's vector from the store's embedder, by the
# model that made it (a store re-embedded with another model embeds its symbols again). The
# rows go with their file's (store/code_sql.py). Schema 10: 8 and 9 are other parts of issue
# 20 (merge: their migrations take the places of the two placeholders below).
V10 = """
CREATE TABLE code_vectors (
    id     TEXT PRIMARY KEY,
    realm  TEXT NOT NULL,
    repo   TEXT NOT NULL,
    path   TEXT NOT NULL,
    model  TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX code_vectors_file ON code_vectors (realm, repo, path);
CREATE INDEX code_vectors_model ON code_vectors (realm, model);
"""
# Memories that know the code moved (store/code_links.py): links from memories to the
# symbols they name, with the body hash and commit at link time; the symbol table's history
# (a row per appearance, body change and removal, in write order) and the index runs that
# name points on it by commit. Links are read by memory (recall) and by symbol; history by
# symbol up to a run's sequence number, and by repository for a run's last row.
# Issue 20 part 6: schema 9.
V9_CODE_LINKS = """
CREATE TABLE code_links (
    realm      TEXT NOT NULL,
    memory_id  TEXT NOT NULL,
    symbol_id  TEXT NOT NULL,
    repo       TEXT NOT NULL,
    qualified  TEXT NOT NULL,
    body_hash  TEXT NOT NULL,
    git_commit TEXT,
    linked_at  INTEGER NOT NULL,
    PRIMARY KEY (realm, memory_id, symbol_id)
) WITHOUT ROWID;
CREATE INDEX code_links_symbol ON code_links (realm, symbol_id);
CREATE TABLE code_history (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    realm     TEXT NOT NULL,
    repo      TEXT NOT NULL,
    symbol_id TEXT NOT NULL,
    path      TEXT NOT NULL,
    qualified TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    removed   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX code_history_symbol ON code_history (realm, symbol_id, seq);
CREATE INDEX code_history_repo ON code_history (realm, repo, seq);
CREATE TABLE code_index_runs (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    realm      TEXT NOT NULL,
    repo       TEXT NOT NULL,
    git_commit TEXT,
    at         INTEGER NOT NULL,
    upto       INTEGER NOT NULL
);
CREATE INDEX code_index_runs_repo ON code_index_runs (realm, repo, seq);
"""

# find_symbol reads its answers' ids from the name index alone (store/code_sql.py): it holds
# the columns a lookup filters on (the name's own case, kind, the qualified name a dotted
# name's parents are matched in) after those it is read in order of, so only the rows kept
# are read from the table. It replaces V7's (realm, lname).
V11 = """
DROP INDEX IF EXISTS code_symbols_name;
CREATE INDEX IF NOT EXISTS code_symbols_find
    ON code_symbols (realm, lname, repo, path, start_line, id, name, kind, qualified);
"""

# The change log (issue 24, change_log.py): a row naming the memory for every memory stored,
# every change of its text, tags, realm, agent, channel or liveness, every purge, and every
# vector stored, replaced or removed — written by triggers, so whoever writes the file logs
# it. A sidecar records the last row it holds (its sequence number and random token) and an
# open reads back only the memories logged after it. The first row stands for "before any
# logged change".
V12 = """
CREATE TABLE change_log (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    token     INTEGER NOT NULL DEFAULT (random())
);
INSERT INTO change_log (memory_id) VALUES ('');
CREATE TRIGGER change_log_mi AFTER INSERT ON memories BEGIN
    INSERT INTO change_log (memory_id) VALUES (new.id);
END;
CREATE TRIGGER change_log_mu
AFTER UPDATE OF content, tags, deleted_at, realm, agent_id, channel ON memories
WHEN old.content != new.content OR old.tags != new.tags
    OR old.deleted_at IS NOT new.deleted_at OR old.realm != new.realm
    OR old.agent_id != new.agent_id OR old.channel != new.channel BEGIN
    INSERT INTO change_log (memory_id) VALUES (new.id);
END;
CREATE TRIGGER change_log_md AFTER DELETE ON memories BEGIN
    INSERT INTO change_log (memory_id) VALUES (old.id);
END;
CREATE TRIGGER change_log_ei AFTER INSERT ON embeddings BEGIN
    INSERT INTO change_log (memory_id) VALUES (new.memory_id);
END;
CREATE TRIGGER change_log_eu AFTER UPDATE ON embeddings BEGIN
    INSERT INTO change_log (memory_id) VALUES (old.memory_id);
    INSERT INTO change_log (memory_id) SELECT new.memory_id WHERE new.memory_id != old.memory_id;
END;
CREATE TRIGGER change_log_ed AFTER DELETE ON embeddings BEGIN
    INSERT INTO change_log (memory_id) VALUES (old.memory_id);
END;
-- The current corrections, read at every start (indexes.py CURRENT_CORRECTIONS): a scan of
-- every memory without it.
CREATE INDEX memories_corrections ON memories (id)
    WHERE kind = 'correction' AND deleted_at IS NULL AND superseded_by IS NULL;
"""

# A realm's memories by their time (store/conditions.py TIME), for a period's memories (the
# time cue's arm, the when lane): a scan of the realm without it, 26 ms a period at 100,000.
V13 = """
CREATE INDEX memories_time ON memories (realm, coalesce(event_time, created_at));
"""

# A memory's pieces' vectors (embed/pieces.py): its sentences', packed (int8 rows, scales), for
# the sem lane's best-sentence score. Memories of one sentence have none; so do memories
# stored before this version until `chitta reembed`.
V14 = """
CREATE TABLE pieces (
    memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    vectors   BLOB NOT NULL
);
"""

#: MIGRATIONS[i] takes a store from schema version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    V1, V2, V3, V4, V5, V6, V7, V8, V9_CODE_LINKS, V10, V11, V12, V13, V14
)  # fmt: skip
LATEST = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection, where: str = "the store") -> int:
    """The schema version of an open file: 0 for an empty file. ``where`` names the file in
    the errors: :class:`StoreCorrupt` for a file that is not a chitta store or records no
    usable version."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return 0
    if "meta" not in tables:
        raise StoreCorrupt(f"{where} is not a chitta store: it has tables but no 'meta' table")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        raise StoreCorrupt(f"{where} is not a chitta store: no schema_version in its 'meta' table")
    raw = row[0]
    # Digits only: int() would also take " 3", "٣" or "+3", which no chitta ever wrote.
    if not isinstance(raw, str | int) or not re.fullmatch(r"[0-9]+", str(raw)) or int(raw) < 1:
        raise StoreCorrupt(
            f"{where} is damaged: its schema_version {raw!r} (in the 'meta' table) is not a "
            f"schema version (this chitta knows 1 to {LATEST})"
        )
    return int(raw)


def check_known(version: int, where: str = "the store") -> None:
    """Refuse a schema version from a newer chitta than this one."""
    if version > LATEST:
        raise SchemaTooNew(
            f"{where} was made by a newer chitta (schema version {version}; this chitta knows "
            f"up to {LATEST}): upgrade chitta to open it"
        )


def migrate(
    conn: sqlite3.Connection, target: int = LATEST, where: str = "the store"
) -> tuple[int, int]:
    """Bring ``conn``'s schema up to ``target``; returns (from, to)."""
    start = schema_version(conn, where)
    check_known(start, where)
    # V5 fills triplet keys with the functions new writes use.
    conn.create_function("chitta_entity_key", 1, entity_key, deterministic=True)
    conn.create_function("chitta_predicate_key", 1, predicate_key, deterministic=True)
    for version in range(start, target):
        # executescript commits first, so each step runs in an explicit transaction of its own.
        try:
            conn.executescript(
                "BEGIN;\n"
                + MIGRATIONS[version]
                + "\nINSERT INTO meta (key, value) VALUES ('schema_version', "
                + f"'{version + 1}') ON CONFLICT (key) DO UPDATE SET value = excluded.value;\n"
                + "COMMIT;"
            )
        except BaseException:
            # A failed statement leaves the step's transaction open on the connection: undo the
            # step whole, so the file stays at ``version`` and the connection stays usable.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return start, max(start, target)

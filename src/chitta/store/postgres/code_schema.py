"""Schema versions 3, 4, 6 and 7 of a PostgreSQL store: the code tables (store/code.py), as
the SQLite file's (sqlite/migrations.py V7, V8, V10 and V11), with agents' row-level
security by realm (postgres/access_control.py) and text compared byte by byte, as everywhere
in the schema."""

from __future__ import annotations

from chitta.store.postgres.access_control import AGENT_ROLE, realm_policies

#: The code tables, and the commands agents may run on them.
CODE_TABLES: dict[str, tuple[str, ...]] = {
    t: ("SELECT", "INSERT", "UPDATE", "DELETE")
    for t in ("code_files", "code_symbols", "code_callsites", "code_imports", "code_bases")
}
#: The table of schema version 4 (V4), and the commands agents may run on it.
EDGE_TABLES: dict[str, tuple[str, ...]] = {
    "code_triplets": ("SELECT", "INSERT", "UPDATE", "DELETE"),
}

_TABLES = """
CREATE TABLE code_files (
    realm        text COLLATE "C" NOT NULL,
    repo         text COLLATE "C" NOT NULL,
    path         text COLLATE "C" NOT NULL,
    language     text COLLATE "C" NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    lines        integer NOT NULL,
    parse_errors integer NOT NULL DEFAULT 0,
    skipped      text COLLATE "C" NOT NULL DEFAULT '',
    indexed_at   bigint NOT NULL,
    git_commit   text COLLATE "C",
    PRIMARY KEY (realm, repo, path)
);
CREATE TABLE code_symbols (
    id         text COLLATE "C" PRIMARY KEY,
    realm      text COLLATE "C" NOT NULL,
    repo       text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    lname      text COLLATE "C" NOT NULL,
    qualified  text COLLATE "C" NOT NULL,
    kind       text COLLATE "C" NOT NULL,
    signature  text COLLATE "C" NOT NULL,
    start_line integer NOT NULL,
    end_line   integer NOT NULL,
    parent     text COLLATE "C",
    language   text COLLATE "C" NOT NULL,
    doc        text COLLATE "C" NOT NULL DEFAULT '',
    body_hash  text COLLATE "C" NOT NULL DEFAULT '',
    indexed_at bigint NOT NULL,
    git_commit text COLLATE "C"
);
CREATE INDEX code_symbols_name ON code_symbols (realm, lname);
CREATE INDEX code_symbols_file ON code_symbols (realm, repo, path, start_line);
CREATE TABLE code_callsites (
    id         text COLLATE "C" PRIMARY KEY,
    realm      text COLLATE "C" NOT NULL,
    repo       text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    caller     text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    form       text COLLATE "C" NOT NULL,
    receiver   text COLLATE "C",
    qualifier  text COLLATE "C",
    line       integer NOT NULL,
    key        text COLLATE "C" NOT NULL,
    caller_id  text COLLATE "C",
    state      text COLLATE "C" NOT NULL DEFAULT 'pending',
    target_id  text COLLATE "C",
    candidates text COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX code_callsites_file ON code_callsites (realm, repo, path, line);
CREATE INDEX code_callsites_key ON code_callsites (realm, key);
CREATE INDEX code_callsites_target ON code_callsites (realm, target_id)
    WHERE target_id IS NOT NULL;
CREATE INDEX code_callsites_caller ON code_callsites (realm, caller_id)
    WHERE caller_id IS NOT NULL;
CREATE TABLE code_imports (
    realm  text COLLATE "C" NOT NULL,
    repo   text COLLATE "C" NOT NULL,
    path   text COLLATE "C" NOT NULL,
    module text COLLATE "C" NOT NULL,
    name   text COLLATE "C",
    alias  text COLLATE "C",
    line   integer NOT NULL
);
CREATE INDEX code_imports_file ON code_imports (realm, repo, path);
CREATE TABLE code_bases (
    realm text COLLATE "C" NOT NULL,
    repo  text COLLATE "C" NOT NULL,
    path  text COLLATE "C" NOT NULL,
    child text COLLATE "C" NOT NULL,
    base  text COLLATE "C" NOT NULL,
    line  integer NOT NULL
);
CREATE INDEX code_bases_file ON code_bases (realm, repo, path);
"""

V3 = "\n".join([
    _TABLES,
    *(realm_policies(t, c) for t, c in CODE_TABLES.items()),
    *(f"GRANT {', '.join(c)} ON {t} TO {AGENT_ROLE};" for t, c in CODE_TABLES.items()),
])  # fmt: skip


# Version 3 to 4: the triplets the code index made of a repository's edges (code/edges.py),
# by the edge's keys, as the SQLite file's (sqlite/migrations.py V8).
_EDGES = """
CREATE TABLE code_triplets (
    realm      text COLLATE "C" NOT NULL,
    repo       text COLLATE "C" NOT NULL,
    subject    text COLLATE "C" NOT NULL,
    predicate  text COLLATE "C" NOT NULL,
    object     text COLLATE "C" NOT NULL,
    triplet_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (realm, repo, subject, predicate, object)
);
"""

V4 = "\n".join([
    _EDGES,
    *(realm_policies(t, c) for t, c in EDGE_TABLES.items()),
    *(f"GRANT {', '.join(c)} ON {t} TO {AGENT_ROLE};" for t, c in EDGE_TABLES.items()),
])  # fmt: skip

#: Symbol search's table (sqlite/migrations.py V10): each symbol's vector, float32 bytes.
SEARCH_TABLES: dict[str, tuple[str, ...]] = {"code_vectors": ("SELECT", "INSERT", "UPDATE",
                                                              "DELETE")}  # fmt: skip

V6 = "\n".join([
    """
CREATE TABLE code_vectors (
    id     text COLLATE "C" PRIMARY KEY,
    realm  text COLLATE "C" NOT NULL,
    repo   text COLLATE "C" NOT NULL,
    path   text COLLATE "C" NOT NULL,
    model  text COLLATE "C" NOT NULL,
    vector bytea NOT NULL
);
CREATE INDEX code_vectors_file ON code_vectors (realm, repo, path);
CREATE INDEX code_vectors_model ON code_vectors (realm, model);
""",
    *(realm_policies(t, c) for t, c in SEARCH_TABLES.items()),
    *(f"GRANT {', '.join(c)} ON {t} TO {AGENT_ROLE};" for t, c in SEARCH_TABLES.items()),
])  # fmt: skip

# Version 6 to 7, as the SQLite file's V11: find_symbol reads its answers' ids from the name
# index alone (an index-only scan: store/code_sql.py), the columns it filters on (the name's
# own case, kind, the qualified name a dotted name's parents are matched in) included after
# those it is read in order of; it replaces V3's (realm, lname).
V7 = """
DROP INDEX IF EXISTS code_symbols_name;
CREATE INDEX IF NOT EXISTS code_symbols_find
    ON code_symbols (realm, lname, repo, path, start_line, id) INCLUDE (name, kind, qualified);
"""

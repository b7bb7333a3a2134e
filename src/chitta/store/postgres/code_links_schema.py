"""The PostgreSQL schema step of the memories' links to symbols and the symbol history
(store/code_links.py), as the SQLite file's (sqlite/migrations.py ``V9_CODE_LINKS``), with
agents' row-level security by realm (postgres/access_control.py) like the other code tables.

Issue 20 part 6: schema version 4 to 5 (3 to 4 is the code lane's)."""

from __future__ import annotations

from chitta.store.postgres.access_control import AGENT_ROLE, realm_policies

#: The tables, and the commands agents may run on them (history and runs are appended to).
CODE_LINK_TABLES: dict[str, tuple[str, ...]] = {
    "code_links": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "code_history": ("SELECT", "INSERT"),
    "code_index_runs": ("SELECT", "INSERT"),
}

_TABLES = """
CREATE TABLE code_links (
    realm      text COLLATE "C" NOT NULL,
    memory_id  text COLLATE "C" NOT NULL,
    symbol_id  text COLLATE "C" NOT NULL,
    repo       text COLLATE "C" NOT NULL,
    qualified  text COLLATE "C" NOT NULL,
    body_hash  text COLLATE "C" NOT NULL,
    git_commit text COLLATE "C",
    linked_at  bigint NOT NULL,
    PRIMARY KEY (realm, memory_id, symbol_id)
);
CREATE INDEX code_links_symbol ON code_links (realm, symbol_id);
CREATE TABLE code_history (
    seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    realm     text COLLATE "C" NOT NULL,
    repo      text COLLATE "C" NOT NULL,
    symbol_id text COLLATE "C" NOT NULL,
    path      text COLLATE "C" NOT NULL,
    qualified text COLLATE "C" NOT NULL,
    body_hash text COLLATE "C" NOT NULL,
    removed   integer NOT NULL DEFAULT 0
);
CREATE INDEX code_history_symbol ON code_history (realm, symbol_id, seq);
CREATE INDEX code_history_repo ON code_history (realm, repo, seq);
CREATE TABLE code_index_runs (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    realm      text COLLATE "C" NOT NULL,
    repo       text COLLATE "C" NOT NULL,
    git_commit text COLLATE "C",
    at         bigint NOT NULL,
    upto       bigint NOT NULL
);
CREATE INDEX code_index_runs_repo ON code_index_runs (realm, repo, seq);
"""

V5_CODE_LINKS = "\n".join([
    _TABLES,
    *(realm_policies(t, c) for t, c in CODE_LINK_TABLES.items()),
    *(f"GRANT {', '.join(c)} ON {t} TO {AGENT_ROLE};" for t, c in CODE_LINK_TABLES.items()),
])  # fmt: skip

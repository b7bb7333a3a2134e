"""The PostgreSQL schema of a store, in forward-only numbered migrations.

The tables mirror the SQLite file's (store/migrations.py): meta, memories, embeddings,
episodes, triplets, entity_aliases, access_log, co_access, replications. What FTS5 keeps for
SQLite is kept here in tables: the keyword postings (``kw_postings``: a memory's positions of
each FTS5 token per column) and each realm's live count and length (``kw_realms``, kept by
triggers). Every write that changes what the in-process indexes derive is stamped with a
generation (``generation``, ``gen`` columns, the ``purged`` and ``link_touches`` logs), so a
process can bring its indexes up to date with writes made through any other.

Text is compared byte by byte (``COLLATE "C"``), as SQLite compares it: ids, keys and
names sort alike on both backends.

Migrations run under an advisory lock, so that of many daemons opening one database at once
exactly one applies them; ``meta.schema_version`` says where a database stands.
"""

from __future__ import annotations

import re

import psycopg

from chitta.errors import SchemaTooNew, StoreCorrupt, StoreMissing
from chitta.store.postgres import access_control, code_links_schema, code_schema

#: The advisory-lock keys (two int4s: chitta's, then which lock) of the schema's migration
#: and of :meth:`PostgresStore.write_lock`. Advisory locks are per database.
LOCK_CLASS = 0x63686974  # "chit"
MIGRATE_LOCK = 1
WRITE_LOCK = 2

V1 = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
CREATE TABLE generation (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    n     bigint NOT NULL,   -- bumped by every write the in-process indexes derive from
    epoch bigint NOT NULL    -- bumped when they must be built again (vectors replaced)
);
INSERT INTO generation (one, n, epoch) VALUES (true, 0, 0);
CREATE TABLE episodes (
    id         text COLLATE "C" PRIMARY KEY,
    realm      text COLLATE "C" NOT NULL,
    title      text COLLATE "C" NOT NULL,
    started_at bigint NOT NULL,
    ended_at   bigint,
    source     jsonb NOT NULL DEFAULT '{}',
    created_at bigint NOT NULL
);
CREATE INDEX episodes_realm ON episodes (realm, started_at);
CREATE TABLE memories (
    seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- insertion order (SQLite's rowid)
    id            text COLLATE "C" PRIMARY KEY,
    kind          text COLLATE "C" NOT NULL,
    content       text COLLATE "C" NOT NULL,
    realm         text COLLATE "C" NOT NULL,
    agent_id      text COLLATE "C" NOT NULL DEFAULT '',
    channel       text COLLATE "C" NOT NULL DEFAULT '',
    tags          text COLLATE "C" NOT NULL DEFAULT '',
    source        jsonb NOT NULL DEFAULT '{}',
    created_at    bigint NOT NULL,
    updated_at    bigint NOT NULL,
    event_time    bigint,
    mu            double precision NOT NULL,
    sigma_sq      double precision NOT NULL,
    n             integer NOT NULL DEFAULT 0,
    tau           double precision NOT NULL,
    strength      double precision NOT NULL,
    tier          text COLLATE "C" NOT NULL,
    access_count  integer NOT NULL DEFAULT 0,
    last_accessed bigint,
    decayed_at    bigint,
    supersedes    text COLLATE "C",
    superseded_by text COLLATE "C",
    episode_id    text COLLATE "C" REFERENCES episodes (id) ON DELETE SET NULL,
    truncated     boolean NOT NULL DEFAULT false,
    deleted_at    bigint,
    kw_length     integer NOT NULL DEFAULT 0,  -- FTS5 tokens of the content (BM25's length)
    gen           bigint NOT NULL DEFAULT 0
);
CREATE INDEX memories_scope ON memories (realm, agent_id, channel);
CREATE INDEX memories_gen ON memories (gen);
CREATE INDEX memories_episode ON memories (episode_id, id) WHERE episode_id IS NOT NULL;
CREATE INDEX memories_session ON memories ((source->>'session'), id)
    WHERE source->>'session' IS NOT NULL;
CREATE INDEX memories_supersedes ON memories (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
-- The memory's scope and liveness beside its vector, so that a filtered HNSW scan needs no
-- join; kept in step with the memory by a trigger. The HNSW index over vector::vector(dim)
-- is made when the model is bound (its dimension is known only then).
CREATE TABLE embeddings (
    memory_id text COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    realm     text COLLATE "C" NOT NULL,
    agent_id  text COLLATE "C" NOT NULL,
    channel   text COLLATE "C" NOT NULL,
    live      boolean NOT NULL,
    vector    vector NOT NULL,
    gen       bigint NOT NULL DEFAULT 0
);
CREATE INDEX embeddings_scope ON embeddings (realm, agent_id, channel) WHERE live;
CREATE INDEX embeddings_gen ON embeddings (gen);
-- Keyword postings: where each FTS5 token (porter unicode61 remove_diacritics 2) occurs in a
-- memory's content (col 0) or tags (col 1).
CREATE TABLE kw_postings (
    term      text COLLATE "C" NOT NULL,
    realm     text COLLATE "C" NOT NULL,
    col       smallint NOT NULL,
    memory_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    positions integer[] NOT NULL,
    PRIMARY KEY (term, realm, col, memory_id)
);
CREATE INDEX kw_postings_memory ON kw_postings (memory_id);
CREATE TABLE kw_realms (
    realm  text COLLATE "C" PRIMARY KEY,
    live   bigint NOT NULL,  -- live memories (BM25's N)
    tokens bigint NOT NULL   -- their content tokens (N x avgdl)
);
CREATE TABLE purged (gen bigint NOT NULL, memory_id text COLLATE "C" NOT NULL);
CREATE INDEX purged_gen ON purged (gen);
CREATE TABLE link_touches (
    gen bigint NOT NULL, realm text COLLATE "C" NOT NULL, names text[] NOT NULL
);
CREATE INDEX link_touches_gen ON link_touches (gen);
CREATE TABLE triplets (
    id             text COLLATE "C" PRIMARY KEY,
    realm          text COLLATE "C" NOT NULL,
    subject        text COLLATE "C" NOT NULL,
    predicate      text COLLATE "C" NOT NULL,
    object         text COLLATE "C" NOT NULL,
    weight         double precision NOT NULL DEFAULT 1.0,
    valid_from     bigint NOT NULL,
    invalidated_at bigint,
    source_memory  text COLLATE "C" REFERENCES memories (id) ON DELETE SET NULL,
    created_at     bigint NOT NULL,
    subject_key    text COLLATE "C" NOT NULL,
    predicate_key  text COLLATE "C" NOT NULL,
    object_key     text COLLATE "C" NOT NULL,
    seq            bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX triplets_out ON triplets (realm, subject_key, predicate_key, weight);
CREATE INDEX triplets_from ON triplets (realm, subject_key, weight);
CREATE INDEX triplets_in ON triplets (realm, object_key, weight);
CREATE INDEX triplets_pair ON triplets (realm, subject_key, object_key);
CREATE INDEX triplets_source ON triplets (source_memory, weight) WHERE source_memory IS NOT NULL;
CREATE INDEX triplets_sourced ON triplets (realm, seq) WHERE source_memory IS NOT NULL;
CREATE TABLE entity_aliases (
    realm         text COLLATE "C" NOT NULL,
    alias_key     text COLLATE "C" NOT NULL,
    canonical_key text COLLATE "C" NOT NULL,
    alias         text COLLATE "C" NOT NULL,
    created_at    bigint NOT NULL,
    PRIMARY KEY (realm, alias_key)
);
CREATE INDEX entity_aliases_canonical ON entity_aliases (realm, canonical_key);
CREATE TABLE access_log (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    at        bigint NOT NULL
);
CREATE INDEX access_log_memory ON access_log (memory_id, at);
CREATE TABLE co_access (
    a          text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b          text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    weight     double precision NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
);
CREATE INDEX co_access_b ON co_access (b);
CREATE TABLE replications (
    memory_id  text COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    session    text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (memory_id, session)
);

-- A memory's scope or liveness changed: its vector's copy and its postings' realm follow.
CREATE FUNCTION chitta_memory_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE embeddings SET realm = NEW.realm, agent_id = NEW.agent_id, channel = NEW.channel,
        live = NEW.deleted_at IS NULL WHERE memory_id = NEW.id;
    IF NEW.realm IS DISTINCT FROM OLD.realm THEN
        UPDATE kw_postings SET realm = NEW.realm WHERE memory_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_moved AFTER UPDATE OF realm, agent_id, channel, deleted_at ON memories
    FOR EACH ROW WHEN (OLD.realm IS DISTINCT FROM NEW.realm
        OR OLD.agent_id IS DISTINCT FROM NEW.agent_id
        OR OLD.channel IS DISTINCT FROM NEW.channel
        OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION chitta_memory_moved();

-- Each realm's live count and length, counted in and out as memories come, go and change.
CREATE FUNCTION chitta_count_realm(r text, live bigint, tokens bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO kw_realms (realm, live, tokens) VALUES (r, live, tokens)
    ON CONFLICT (realm) DO UPDATE SET live = kw_realms.live + excluded.live,
        tokens = kw_realms.tokens + excluded.tokens
$$;
CREATE FUNCTION chitta_realms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM chitta_count_realm(realm, count(*), sum(kw_length)) FROM added
        WHERE deleted_at IS NULL GROUP BY realm ORDER BY realm;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_added AFTER INSERT ON memories REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION chitta_realms_added();
CREATE FUNCTION chitta_realms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM chitta_count_realm(realm, -count(*), -sum(kw_length)) FROM removed
        WHERE deleted_at IS NULL GROUP BY realm ORDER BY realm;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_removed AFTER DELETE ON memories REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION chitta_realms_removed();
CREATE FUNCTION chitta_realms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.deleted_at IS NULL THEN
        PERFORM chitta_count_realm(OLD.realm, -1, -OLD.kw_length);
    END IF;
    IF NEW.deleted_at IS NULL THEN
        PERFORM chitta_count_realm(NEW.realm, 1, NEW.kw_length);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_changed AFTER UPDATE OF realm, deleted_at, kw_length ON memories
    FOR EACH ROW WHEN (OLD.realm IS DISTINCT FROM NEW.realm
        OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
        OR OLD.kw_length <> NEW.kw_length)
    EXECUTE FUNCTION chitta_realms_changed();
"""

# A realm's memories by their time (store/conditions.py TIME), for a period's memories (the
# time cue's arm, the when lane), as SQLite's schema 13.
V8 = """
CREATE INDEX memories_time ON memories (realm, (coalesce(event_time, created_at)));
"""

# A memory's pieces' vectors (embed/pieces.py), as SQLite's schema 14: packed (int8 rows and
# their scales); agents see a memory's pieces where they may see the memory.
V9 = "\n".join([
    """
CREATE TABLE pieces (
    memory_id text COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    vectors   bytea NOT NULL
);""",
    access_control.later_memory_table("pieces"),
])  # fmt: skip

#: MIGRATIONS[i] takes a database from schema version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    V1,
    access_control.V2,  # agents' roles, grants and row-level security
    code_schema.V3,  # code intelligence's tables
    code_schema.V4,  # the triplets the code index made of its edges
    code_links_schema.V5_CODE_LINKS,  # memories linked to symbols, the symbol history
    code_schema.V6,  # symbol search's vectors
    code_schema.V7,  # find_symbol's covering name index
    V8,  # memories by their time
    V9,  # memories' pieces
)
LATEST = len(MIGRATIONS)


def version(conn: psycopg.Connection, where: str) -> int:
    """The schema version of the database: 0 when it holds no chitta schema."""
    if conn.execute("SELECT to_regclass('meta')").fetchone()[0] is None:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or not re.fullmatch(r"[0-9]+", row[0]) or int(row[0]) < 1:
        raise StoreCorrupt(
            f"the database {where} is not a chitta store: its 'meta' table has no usable "
            "schema_version"
        )
    return int(row[0])


def migrate(conn: psycopg.Connection, where: str, *, create: bool) -> tuple[int, int]:
    """Bring the database's schema to :data:`LATEST` under the migration lock (each step one
    transaction); returns (from, to). ``conn`` is in autocommit mode."""
    conn.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_CLASS, MIGRATE_LOCK))
    try:
        start = version(conn, where)
        if start > LATEST:
            raise SchemaTooNew(
                f"the database {where} was made by a newer chitta (schema version {start}; this "
                f"chitta knows up to {LATEST}): upgrade chitta to open it"
            )
        if start == 0 and not create:
            raise StoreMissing(
                f"the database {where} holds no chitta store; open it with create allowed "
                "(`chitta remember` creates one) or check CHITTA_STORE and --store"
            )
        for step in range(start, LATEST):
            with conn.transaction():
                conn.execute(MIGRATIONS[step])
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(step + 1),),
                )
        return start, max(start, LATEST)
    finally:
        if not conn.closed:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_CLASS, MIGRATE_LOCK))

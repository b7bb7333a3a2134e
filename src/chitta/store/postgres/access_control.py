"""Access control per agent on PostgreSQL: agents are database roles, and row-level security
lets each read and write only the realms granted to it, in the database itself.

The migration :data:`V2` (schema.py's second step) makes:

- ``chitta_agent``, a NOLOGIN group role every agent's role is a member of (roles are the
  cluster's, so one made by another database's migration is taken as it is). The group has
  the table privileges agents need: SELECT, INSERT, UPDATE, DELETE on the data tables and
  USAGE on their sequences; nothing on ``chitta_grants``.
- ``chitta_grants``: (realm, grantee role, can_write). A realm granted to ``chitta_agent`` is
  shared by every agent; one granted to ``alice`` is alice's (and any role's she is a member
  of). Only the owner (the role that ran the migrations) changes it, through
  :data:`ADMIN_FUNCTIONS` (``chitta_grant``, ``chitta_share``, ``chitta_revoke``).
- ``chitta_readable_realms(who)`` and ``chitta_writable_realms(who)``: STABLE SECURITY DEFINER
  functions reading the grants for a role. The policies call them with ``current_user``
  (inside a SECURITY DEFINER function ``current_user`` is the definer, so the caller is
  passed in); they answer only for roles the session's login role is a member of, so an
  agent cannot list another's realms by naming it.
- Row-level security, ENABLE but not FORCE, on every table holding a realm's or a memory's
  data. ENABLE binds every role but the tables' owner (and superusers, and BYPASSRLS roles);
  the owner, who runs migrations and administers grants, sees everything. FORCE would bind
  the owner too, and the migrations, ``chitta migrate`` and integrity checks would see only
  the owner's own grants.

The policies say ``realm IN (SELECT chitta_readable_realms(current_user))``: an uncorrelated
subquery PostgreSQL evaluates once per statement (a hashed subplan), not a function call per
row. A read sees rows of readable realms; INSERT needs a writable realm; UPDATE reaches
readable rows and refuses (42501, :class:`chitta.errors.AccessDenied`) to write one back
unless its realm is writable; DELETE reaches writable rows only. Tables keyed by a memory's
id alone (access_log, co_access, replications) follow the memory through an EXISTS on
``memories`` (whose own policy applies inside it); ``purged`` gets a realm column.
``meta`` is readable by every agent and writable but for ``schema_version`` and ``model``
(the owner binds and replaces the embedding model: a re-embedding must reach every realm).

Measured (docs/team.md): searches cost the same with and without row-level security within
noise at 3 x 20,000 memories; a per-row function call instead cost 5 to 10 times as much.
Under row-level security only a leakproof condition uses an index, so the migration gives
``memories`` a generated ``session`` column (``source->>'session'`` is not leakproof).

What this does not hide: that an id exists (a clashing primary key, a foreign key to a
memory in another realm) and the keys of ``meta`` (per-session state holds memory ids).
"""

from __future__ import annotations

#: The group role of agents.
AGENT_ROLE = "chitta_agent"

#: Tables with a ``realm`` column, and the commands agents may run on them.
REALM_TABLES: dict[str, tuple[str, ...]] = {
    "memories": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "embeddings": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "kw_postings": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "kw_realms": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "triplets": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "entity_aliases": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "episodes": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "link_touches": ("SELECT", "INSERT"),
    "purged": ("SELECT", "INSERT"),
}
#: Tables keyed by memory ids (the columns naming them), and agents' commands on them.
MEMORY_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "access_log": (("memory_id",), ("SELECT", "INSERT", "UPDATE", "DELETE")),
    "replications": (("memory_id",), ("SELECT", "INSERT", "UPDATE", "DELETE")),
    "co_access": (("a", "b"), ("SELECT", "INSERT", "UPDATE", "DELETE")),
}
#: Tables keyed by memory ids that later schemas add (postgres/schema.py), as MEMORY_TABLES.
LATER_MEMORY_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pieces": (("memory_id",), ("SELECT", "INSERT", "UPDATE", "DELETE")),  # schema 9
}
#: meta keys only the owner writes.
OWNER_KEYS = ("schema_version", "model")

_READABLE = "realm IN (SELECT chitta_readable_realms(current_user))"
_WRITABLE = "realm IN (SELECT chitta_writable_realms(current_user))"

_ROLE_AND_GRANTS = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{AGENT_ROLE}') THEN
        CREATE ROLE {AGENT_ROLE} NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another database's migration made it meanwhile: roles are the cluster's
END $$;
CREATE TABLE chitta_grants (
    realm      text COLLATE "C" NOT NULL,
    grantee    text COLLATE "C" NOT NULL,  -- a role; {AGENT_ROLE}: every agent
    can_write  boolean NOT NULL DEFAULT false,
    granted_at bigint NOT NULL,
    PRIMARY KEY (realm, grantee)
);
REVOKE ALL ON chitta_grants FROM PUBLIC;
-- The realms granted to a role ``who`` is a member of (read, or read and write): only for a
-- ``who`` the session's login role may act as (itself, or a role it is a member of).
-- A grantee role dropped since is skipped (to_regrole: NULL), not an error. ROWS: a role
-- has a few realms, which the planner should know when it joins by them.
CREATE FUNCTION chitta_readable_realms(who name) RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER ROWS 10 AS $f$
    SELECT DISTINCT g.realm FROM chitta_grants g
    WHERE pg_has_role(session_user, who, 'MEMBER')
        AND coalesce(pg_has_role(who, to_regrole(g.grantee), 'MEMBER'), false)
$f$;
CREATE FUNCTION chitta_writable_realms(who name) RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER ROWS 10 AS $f$
    SELECT DISTINCT g.realm FROM chitta_grants g
    WHERE g.can_write AND pg_has_role(session_user, who, 'MEMBER')
        AND coalesce(pg_has_role(who, to_regrole(g.grantee), 'MEMBER'), false)
$f$;
-- Whether the current role may read (write) realm ``r``: always where row-level security
-- does not bind it (the owner, a superuser), else by the grants.
CREATE FUNCTION chitta_can_read(r text) RETURNS boolean LANGUAGE sql STABLE AS $f$
    SELECT NOT row_security_active('memories')
        OR r IN (SELECT chitta_readable_realms(current_user))
$f$;
CREATE FUNCTION chitta_can_write(r text) RETURNS boolean LANGUAGE sql STABLE AS $f$
    SELECT NOT row_security_active('memories')
        OR r IN (SELECT chitta_writable_realms(current_user))
$f$;
-- A SECURITY DEFINER function runs with a search path of its own, so that no object an
-- agent could make in another schema is found first: the schema the grants table is in.
DO $$
DECLARE here text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n
                      ON n.oid = c.relnamespace WHERE c.oid = 'chitta_grants'::regclass);
BEGIN
    EXECUTE format('ALTER FUNCTION chitta_readable_realms(name) SET search_path = %I, pg_temp',
                   here);
    EXECUTE format('ALTER FUNCTION chitta_writable_realms(name) SET search_path = %I, pg_temp',
                   here);
END $$;
ALTER TABLE purged ADD COLUMN realm text COLLATE "C";
-- A memory's session as a column of its own: under row-level security PostgreSQL uses an
-- index only for a leakproof condition, and ``source->>'session' = $1`` (jsonb's ->>) is
-- not one, so the session's recent memories were a scan of every memory; text = is.
ALTER TABLE memories ADD COLUMN session text COLLATE "C"
    GENERATED ALWAYS AS (source->>'session') STORED;
DROP INDEX memories_session;
CREATE INDEX memories_session ON memories (session, id) WHERE session IS NOT NULL;
"""

#: The owner's functions for grants (EXECUTE is the owner's alone). A change of grants bumps
#: the store's epoch, so every process builds its in-process indexes again from what its
#: role may now read.
ADMIN_FUNCTIONS = f"""
CREATE FUNCTION chitta_grant(role text, realm text, can_write boolean DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = role) THEN
        RAISE EXCEPTION 'no role %', role USING ERRCODE = 'undefined_object';
    END IF;
    INSERT INTO chitta_grants (realm, grantee, can_write, granted_at)
    VALUES (realm, role, can_write, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
    ON CONFLICT ON CONSTRAINT chitta_grants_pkey
    DO UPDATE SET can_write = excluded.can_write, granted_at = excluded.granted_at;
    UPDATE generation SET epoch = epoch + 1;
END $f$;
CREATE FUNCTION chitta_share(realm text, can_write boolean DEFAULT true) RETURNS void
LANGUAGE sql AS $f$ SELECT chitta_grant('{AGENT_ROLE}', realm, can_write) $f$;
CREATE FUNCTION chitta_revoke(role text, realm text) RETURNS boolean
LANGUAGE plpgsql AS $f$
DECLARE gone boolean;
BEGIN
    DELETE FROM chitta_grants g WHERE g.grantee = role AND g.realm = chitta_revoke.realm;
    gone := FOUND;
    UPDATE generation SET epoch = epoch + 1;
    RETURN gone;
END $f$;
REVOKE EXECUTE ON FUNCTION chitta_grant(text, text, boolean), chitta_share(text, boolean),
    chitta_revoke(text, text) FROM PUBLIC;
"""


def realm_policies(table: str, commands: tuple[str, ...]) -> str:
    sql = [f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;",
           f"CREATE POLICY {table}_read ON {table} FOR SELECT TO {AGENT_ROLE} USING ({_READABLE});",
           f"CREATE POLICY {table}_insert ON {table} FOR INSERT TO {AGENT_ROLE} "
           f"WITH CHECK ({_WRITABLE});"]  # fmt: skip
    if "UPDATE" in commands:
        sql.append(f"CREATE POLICY {table}_update ON {table} FOR UPDATE TO {AGENT_ROLE} "
                   f"USING ({_READABLE}) WITH CHECK ({_WRITABLE});")  # fmt: skip
    if "DELETE" in commands:
        sql.append(f"CREATE POLICY {table}_delete ON {table} FOR DELETE TO {AGENT_ROLE} "
                   f"USING ({_WRITABLE});")  # fmt: skip
    return "\n".join(sql)


def memory_policies(table: str, columns: tuple[str, ...]) -> str:
    """Policies following the memories each row names: the memory's own policy applies inside
    the EXISTS, so it finds a memory only where the agent may read it."""
    readable = " AND ".join(
        f"EXISTS (SELECT 1 FROM memories m WHERE m.id = {table}.{c})" for c in columns
    )
    writable = " AND ".join(
        f"EXISTS (SELECT 1 FROM memories m WHERE m.id = {table}.{c} AND m.{_WRITABLE})"
        for c in columns
    )
    return "\n".join([
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;",
        f"CREATE POLICY {table}_read ON {table} FOR SELECT TO {AGENT_ROLE} USING ({readable});",
        f"CREATE POLICY {table}_insert ON {table} FOR INSERT TO {AGENT_ROLE} "
        f"WITH CHECK ({writable});",
        f"CREATE POLICY {table}_update ON {table} FOR UPDATE TO {AGENT_ROLE} "
        f"USING ({readable}) WITH CHECK ({writable});",
        f"CREATE POLICY {table}_delete ON {table} FOR DELETE TO {AGENT_ROLE} USING ({writable});",
    ])  # fmt: skip


def later_memory_table(table: str) -> str:
    """The policies and agents' privileges of one of :data:`LATER_MEMORY_TABLES`, for the
    schema step that makes it."""
    columns, commands = LATER_MEMORY_TABLES[table]
    return "\n".join([memory_policies(table, columns),
                      f"GRANT {', '.join(commands)} ON {table} TO {AGENT_ROLE};"])  # fmt: skip


def _meta_policies() -> str:
    owned = ", ".join(f"'{k}'" for k in OWNER_KEYS)
    return "\n".join([
        "ALTER TABLE meta ENABLE ROW LEVEL SECURITY;",
        f"CREATE POLICY meta_read ON meta FOR SELECT TO {AGENT_ROLE} USING (true);",
        f"CREATE POLICY meta_insert ON meta FOR INSERT TO {AGENT_ROLE} "
        f"WITH CHECK (key NOT IN ({owned}));",
        f"CREATE POLICY meta_update ON meta FOR UPDATE TO {AGENT_ROLE} "
        f"USING (true) WITH CHECK (key NOT IN ({owned}));",
        f"CREATE POLICY meta_delete ON meta FOR DELETE TO {AGENT_ROLE} "
        f"USING (key NOT IN ({owned}));",
    ])  # fmt: skip


def _privileges() -> str:
    sql = [f"GRANT SELECT, INSERT, UPDATE, DELETE ON meta TO {AGENT_ROLE};",
           f"GRANT SELECT, UPDATE ON generation TO {AGENT_ROLE};"]  # fmt: skip
    for table, commands in REALM_TABLES.items():
        sql.append(f"GRANT {', '.join(commands)} ON {table} TO {AGENT_ROLE};")
    for table, (_, commands) in MEMORY_TABLES.items():
        sql.append(f"GRANT {', '.join(commands)} ON {table} TO {AGENT_ROLE};")
    # The identity columns' sequences (memories.seq, triplets.seq, access_log.id).
    for table, column in (("memories", "seq"), ("triplets", "seq"), ("access_log", "id")):
        sql.append(f"DO $$ BEGIN EXECUTE format('GRANT USAGE ON SEQUENCE %s TO {AGENT_ROLE}', "
                   f"pg_get_serial_sequence('{table}', '{column}')); END $$;")  # fmt: skip
    return "\n".join(sql)


#: Schema version 1 to 2: agents' roles, grants, privileges and row-level security.
V2 = "\n".join([
    _ROLE_AND_GRANTS,
    ADMIN_FUNCTIONS,
    *(realm_policies(t, c) for t, c in REALM_TABLES.items()),
    *(memory_policies(t, cols) for t, (cols, _) in MEMORY_TABLES.items()),
    _meta_policies(),
    _privileges(),
])  # fmt: skip

"""Reads whose SQL is the same on both backends but for the parameter mark (``?`` for SQLite,
``%s`` for psycopg): each takes the backend's read function (SQL and parameters in, rows
out) and its mark."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chitta.store.conditions import TIME, scope_condition
from chitta.store.kinds import Kind
from chitta.store.records import Memory, Scope

Read = Callable[[str, Sequence[object]], list]


def scope_oldest(read: Read, mark: str, scope: Scope) -> int | None:
    """When the scope's oldest live record happened: the earliest memory time (its
    ``event_time``, else ``created_at``) or start of an episode holding one of its live
    memories; ``None`` when the scope holds nothing."""
    where, params = scope_condition(scope, "m", mark=mark)
    own = read(
        f"SELECT min({TIME}) FROM memories m WHERE {where} AND m.deleted_at IS NULL", params
    )[0][0]
    episode = read(
        f"SELECT e.started_at FROM episodes e WHERE e.realm = {mark} AND EXISTS (SELECT 1 FROM "
        f"memories m WHERE m.episode_id = e.id AND {where} AND m.deleted_at IS NULL) "
        "ORDER BY e.started_at LIMIT 1",
        (scope.realm, *params),
    )
    times = [t for t in (own, episode[0][0] if episode else None) if t is not None]
    return min(times) if times else None


def episode_neighbours(
    read: Read, mark: str, memory_id: str, span: int, episode: str | None
) -> list[tuple[str, int]]:
    """The live memories within ``span`` places of ``memory_id`` in its episode (in the order
    they were stored), with their distance: 1 is the turn just before or after. ``episode``
    saves looking the memory's episode up when the caller has it."""
    if episode is None:
        rows = read(f"SELECT episode_id FROM memories WHERE id = {mark}", (memory_id,))
        episode = rows[0][0] if rows else None
    if episode is None or span <= 0:
        return []
    live = f"episode_id = {mark} AND deleted_at IS NULL"
    before = read(
        f"SELECT id FROM memories WHERE {live} AND id < {mark} ORDER BY id DESC LIMIT {mark}",
        (episode, memory_id, span),
    )
    after = read(
        f"SELECT id FROM memories WHERE {live} AND id > {mark} ORDER BY id LIMIT {mark}",
        (episode, memory_id, span),
    )
    near = [(r[0], d) for d, r in enumerate(before, 1)]
    near += [(r[0], d) for d, r in enumerate(after, 1)]
    return sorted(near, key=lambda item: item[0])


def turns_before(
    read: Read, mark: str, session_column: str, memories: Sequence[Memory]
) -> dict[str, str]:
    """For each of ``memories`` in an episode or a session, the live turn (kind ``episode``)
    stored just before it there: its episode's, else its session's (``session_column``, the
    backend's expression for the source's session). Those with none are left out."""
    before: dict[str, str] = {}
    for m in memories:
        if m.episode_id is not None:
            column, key = "episode_id", m.episode_id
        elif m.source.session:
            column, key = session_column, m.source.session
        else:
            continue
        rows = read(
            f"SELECT id FROM memories WHERE {column} = {mark} AND id < {mark} "
            f"AND deleted_at IS NULL AND kind = {mark} ORDER BY id DESC LIMIT 1",
            (key, m.id, Kind.EPISODE.value),
        )
        if rows:
            before[m.id] = rows[0][0]
    return before


def episode_members(read: Read, mark: str, scope: Scope) -> dict[str, list[str]]:
    """The live memories of ``scope`` that belong to an episode, by episode, each episode's
    in the order they were stored (the episode lane's units)."""
    where, params = scope_condition(scope, mark=mark)
    rows = read(
        f"SELECT episode_id, id FROM memories WHERE {where} AND deleted_at IS NULL "
        "AND episode_id IS NOT NULL ORDER BY episode_id, id",
        params,
    )
    members: dict[str, list[str]] = {}
    for episode, memory_id in rows:
        members.setdefault(episode, []).append(memory_id)
    return members

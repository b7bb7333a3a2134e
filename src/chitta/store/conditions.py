"""SQL conditions both backends put in their queries: a scope (realm, agent, channel) and a
period of time. Only the parameter mark differs (``?`` for SQLite, ``%s`` for psycopg)."""

from __future__ import annotations

from chitta.store.records import Scope

#: A memory's time: when it happened, else when it was stored (seed 002 §2.7).
TIME = "coalesce(m.event_time, m.created_at)"


def scope_condition(
    scope: Scope, alias: str = "", *, elsewhere: bool = False, mark: str = "?"
) -> tuple[str, list[str]]:
    """A WHERE fragment (and its parameters) restricting rows to ``scope`` (``elsewhere``: to
    its agent and channel in every other realm)."""
    p = f"{alias}." if alias else ""
    sql, params = [f"{p}realm {'<>' if elsewhere else '='} {mark}"], [scope.realm]
    if scope.agent_id is not None:
        sql.append(f"{p}agent_id = {mark}")
        params.append(scope.agent_id)
    if scope.channel is not None:
        sql.append(f"{p}channel = {mark}")
        params.append(scope.channel)
    return " AND ".join(sql), params


def period_condition(
    start_ms: int, end_ms: int, include_superseded: bool, mark: str = "?"
) -> tuple[str, list[int]]:
    """A condition (and its parameters) on ``memories m`` left-joined with ``episodes e``: the
    memory's time or its episode's start lies in ``[start_ms, end_ms)``, and it is not
    superseded unless ``include_superseded``."""
    q = mark
    sql = f"(({TIME} >= {q} AND {TIME} < {q}) OR (e.started_at >= {q} AND e.started_at < {q}))"
    if not include_superseded:
        sql = f"({sql} AND m.superseded_by IS NULL)"
    return sql, [start_ms, end_ms, start_ms, end_ms]

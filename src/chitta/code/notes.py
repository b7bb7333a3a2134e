"""The short note an agent reads for a possibly stale recall hit (code/stale.py), from the
hit's JSON entries: pure and import-light, for the hooks and the MCP replies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: Characters of a commit a short note shows.
SHORT = 8


def _short(commit: object) -> str:
    return str(commit)[:SHORT] if commit else "?"


def stale_note(rows: Sequence[dict[str, Any]]) -> str:
    """``possibly stale: Cart.total changed since abc12345..def67890`` for a hit's
    ``possibly_stale`` entries (the first symbol, and how many more)."""
    first = rows[0]
    since, until = first.get("since_commit"), first.get("until_commit")
    span = f" since {_short(since)}..{_short(until)}" if since or until else ""
    more = f" (+{len(rows) - 1} more)" if len(rows) > 1 else ""
    return f"possibly stale: {first.get('symbol')} {first.get('change')}{span}{more}"

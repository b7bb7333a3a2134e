"""``hygiene``: near-duplicate clusters merged (reversibly) and value conflicts surfaced."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.ops.common import REALM
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import MAX_ID_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta

#: Characters of each memory's text in the reply, for the person deciding.
PREVIEW_CHARS = 80


def _hygiene(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    if p.get("undo"):
        if p.get("dry_run"):
            return {"undo": p["undo"], "dry_run": True, "restored": 0}
        return {"undo": p["undo"], "restored": chitta.hygiene_undo(p["undo"])}
    found = chitta.hygiene(p.get("realm"), dry_run=p.get("dry_run", False))
    named = {m.keep for m in found.merges} | {i for m in found.merges for i in m.merged}
    named |= {i for c in found.conflicts for i in (c.newer, c.older)}
    texts = chitta.store.get_many(sorted(named))
    return {
        "realm": found.realm,
        "scanned": found.scanned,
        "dry_run": p.get("dry_run", False),
        "run": found.run,
        "merges": [{"keep": m.keep, "merged": list(m.merged)} for m in found.merges],
        "conflicts": [
            {"newer": c.newer, "older": c.older, "cosine": c.cosine, "roles": list(c.roles)}
            for c in found.conflicts
        ],  # fmt: skip
        "previews": {i: m.content[:PREVIEW_CHARS] for i, m in texts.items()},
    }


HYGIENE = Operation(
    "hygiene",
    "Merge the realm's near-duplicates into their best-written copy and list memories whose "
    "numbers conflict (--dry-run: only show; --undo RUN: put a run's merges back).",
    (
        REALM,
        Param("dry_run", "flag", "Show what would be merged; change nothing.", default=False),
        Param(
            "undo",
            "text",
            "A run id a hygiene run printed: put back every memory it merged.",
            max_length=MAX_ID_CHARS + 32,
        ),
    ),
    _hygiene,
    writes=True,
    long=True,
    detail="Duplicates: cosine at least 0.95, the same scope and kind, and neither adds a "
    "name, number or identifier the other lacks; the one kept is a user's before an agent's, "
    "then the more confident, stronger, longer. The others are superseded by it (hidden, not "
    "deleted); it takes their tags, access count and sessions. Conflicts (cosine at least "
    "0.85, each stating a number the other lacks) are listed newer first with their roles "
    "and left as they are (docs/memory-model.md, Hygiene).",
)

OPERATIONS = (HYGIENE,)

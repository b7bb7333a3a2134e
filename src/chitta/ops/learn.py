"""``learn``: what the resonance learner has learned in a realm; reset it, or switch it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chitta.errors import BadArgument
from chitta.ops.common import REALM
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import check_scope_name

if TYPE_CHECKING:
    from chitta.api import Chitta


def _learn(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    realm = check_scope_name(p.get("realm") or None, "realm", optional=True) or chitta.realm
    on, off = p.get("on", False), p.get("off", False)
    if on and off:
        raise BadArgument("give --on or --off, not both")
    out: dict[str, Any] = {}
    if p.get("reset"):
        out["forgotten_events"] = chitta.learner.reset(realm)
    if on or off:
        chitta.learner.switch(realm, on=on)
    return {**chitta.learner.status(realm), **out}


LEARN = Operation(
    "learn",
    "Show what the resonance learner has learned in the realm from feedback (--reset: forget "
    "it; --off/--on: stop or resume learning there).",
    (
        REALM,
        Param(
            "reset",
            "flag",
            "Forget what the realm learned: its recalls run the preset "
            "again until the next feedback.",
            default=False,
        ),
        Param(
            "off",
            "flag",
            "Stop learning in the realm (what it learned is kept, unused).",
            default=False,
        ),
        Param("on", "flag", "Resume learning in the realm.", default=False),
    ),  # fmt: skip
    _learn,
    writes=True,
    detail="Each recall draws its weights (semantic vs keyword, each lane's weight, the tag "
    "boost, the graph lane's spread) from what feedback taught: strengthen and weaken of a "
    "returned memory, and an answer that drew on an injected one. Shown per parameter: the "
    "preset's value, the learned mean and spread, the range; and the feedback events per "
    "query context. CHITTA_LEARN=0 turns learning off everywhere (docs/recall.md, The "
    "resonance learner).",
)

OPERATIONS = (LEARN,)

"""The prompt hook's admission: the band the daemon reported, and the gate over each row.

Seed 000: the hybrid lane's reply carries the calibrated maximum relevance; the hook bins it
into KNOWN or UNKNOWN, states it to the model in words, and applies the silencing rules of
recall/confidence/gate.py to every lane's rows. ``CHITTA_ADMIT_DEBUG=1`` prints one line per row on
stderr: lane, confidence, band, whether the small-realm relaxation applied, the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from chitta.config import DEFAULT_REALM
from chitta.hooks.calls import Outcome
from chitta.recall.confidence.gate import (
    GateSettings,
    GateView,
    Turn,
    is_terse_negation,
    read_reply_band,
    read_reply_turn,
    relaxed,
)

#: The call whose reply carries the band (the hybrid lane), and its page size.
BAND_CALL = "hyb"
#: Calls whose replies rank other realms: never the source of this realm's band.
FOREIGN_CALLS = frozenset({"xr"})


def gate_view(
    outcomes: Sequence[Outcome], prompt: str, realm: str, settings: GateSettings, page: int
) -> GateView:
    """The gate for a prompt, from the hybrid lane's reply (the band's source, as in the
    seed), else the first other reply of this realm that carries one; never from the
    cross-realm call, whose pool is other realms'. ``page`` is the hybrid lane's limit."""
    replies = sorted((o for o in outcomes if o.result and o.name not in FOREIGN_CALLS),
                     key=lambda o: o.name != BAND_CALL)  # fmt: skip
    turn = next((t for o in replies if (t := read_reply_turn(o.result)) is not None), None)
    if turn is None and is_terse_negation(prompt):
        turn = Turn((), True)
    for reply in replies:
        band, calibrated, raw = read_reply_band(reply.result)
        if band is None:
            continue
        # Only the hybrid page tells a small realm (the other lanes ask for other page sizes).
        hits = reply.result.get("hits")
        page_len = len(hits) if isinstance(hits, list) else page
        relax = (reply.name == BAND_CALL and raw is not None
                 and relaxed(realm, DEFAULT_REALM, page_len, page, raw, settings))  # fmt: skip
        words = reply.result["confidence"].get("words")
        return GateView(settings, turn, band, calibrated, words if isinstance(words, str)
                        else None, relax)  # fmt: skip
    return GateView(settings, turn)

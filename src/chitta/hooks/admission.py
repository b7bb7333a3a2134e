"""The prompt hook's admission: the band the daemon reported, and the gate over each row.

Seed 000: the hybrid lane's reply carries the calibrated maximum relevance; the hook bins it
into KNOWN or UNKNOWN, states it to the model in words, and applies the silencing rules of
recall/gate.py to every lane's rows. ``CHITTA_ADMIT_DEBUG=1`` prints one line per row on
stderr: lane, confidence, band, whether the small-realm relaxation applied, the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from chitta.config import DEFAULT_REALM
from chitta.hooks.calls import Outcome
from chitta.recall.gate import GateSettings, GateView, Turn, is_terse_negation, relaxed

#: The call whose reply carries the band (the hybrid lane), and its page size.
BAND_CALL = "hyb"


def gate_view(
    outcomes: Sequence[Outcome], prompt: str, realm: str, settings: GateSettings, page: int
) -> GateView:
    """The gate for a prompt, from the first reply that carries a confidence (the hybrid
    lane's when it came back); ``page`` is the hybrid lane's limit."""
    replies = sorted((o for o in outcomes if o.result), key=lambda o: o.name != BAND_CALL)
    turn_data = next((o.result["turn"] for o in replies if o.result.get("turn")), None)
    turn = (
        Turn(tuple(turn_data["distinctive"]), bool(turn_data["terse_negation"]))
        if turn_data
        else Turn((), is_terse_negation(prompt))
    )
    band_reply = next((o for o in replies if o.result.get("confidence")), None)
    if band_reply is None:
        return GateView(settings, turn)
    conf = band_reply.result["confidence"]
    # Only the hybrid page tells a small realm (the other lanes ask for other page sizes).
    hyb = next((o for o in replies if o.name == BAND_CALL), None)
    relax = hyb is not None and relaxed(
        realm, DEFAULT_REALM, len(hyb.result.get("hits", [])), page, conf["raw"], settings
    )
    return GateView(settings, turn, conf["band"], conf["calibrated"], conf["words"], relax)

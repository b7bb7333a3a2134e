"""Diagnostic lines about a recall, for stderr: phase timers and per-candidate decisions.

Ids, lanes, ranks, scores and timings only — never stored text (memories are private).
"""

from __future__ import annotations

from chitta.recall.result import RecallResult


def profile_line(result: RecallResult) -> str:
    """``CHITTA_RECALL_PROFILE``: one line of phase timers in milliseconds."""
    phases = " ".join(f"{name}={ms:.2f}" for name, ms in result.timing_ms.items())
    return f"chitta recall profile: strategy={result.strategy} {phases}"


def admit_lines(result: RecallResult) -> list[str]:
    """``CHITTA_ADMIT_DEBUG``: one line per fused candidate with its lanes and outcome, and
    one per correction the keyed lookup returned."""
    lines = []
    conf = result.confidence
    band = "" if conf is None else f" confidence={conf.calibrated:.3f} band={conf.band}"
    for d in result.decisions:
        lanes = ",".join(f"{n}#{h.rank}:{h.raw:.4g}" for n, h in d.lanes.items())
        final = "" if d.final is None else f" final={d.final:.5f}"
        factors = ",".join(f"{n}:{v:.3f}" for n, v in d.factors.items())
        factors = f" factors={factors}" if factors else ""
        lines.append(
            f"chitta admit: {d.id} score={d.score:.5f}{final} lanes={lanes}{factors}{band} "
            f"{d.outcome}"
        )
    for c in result.corrections:
        # The count of matched keys, not the keys: they are words of the stored text.
        lines.append(f"chitta admit: {c.memory.id} corr keys={len(c.keys)} correction")
    return lines

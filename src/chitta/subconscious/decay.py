"""Decay and tier demotion (seed 001's per-kind decay rates), one batch of memories at a time.

A memory's strength and confidence fade with the time since it was last decayed, at its
kind's rate (``store/kinds.py`` DECAY_RATE, kept in its confidence's ``tau``); its tier
(hot / warm / cool / cold) follows its strength. Both fades compose exactly (``exp(-r a) ×
exp(-r b) = exp(-r (a + b))``, and the variance's relaxation likewise), so decaying hourly
gives what decaying once a day gives: the subconscious and `chitta decay` can both run.

Each batch is read again under the store's write lock and written in one transaction, so a
strengthen or weaken that lands while a sweep runs is never overwritten with an older state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from chitta.store.base import Store
from chitta.store.confidence import TIERS, decay, decay_strength, tier_for
from chitta.store.records import Memory

MS_PER_DAY = 86_400_000


@dataclass(frozen=True, slots=True)
class Decayed:
    """What one batch's decay did: memories whose state changed, and those of them that
    moved to a lower tier."""

    changed: int = 0
    demoted: int = 0

    def __add__(self, other: Decayed) -> Decayed:
        return Decayed(self.changed + other.changed, self.demoted + other.demoted)


def decayed(memory: Memory, now: int, *, min_days: float = 0.0) -> Memory | None:
    """``memory`` decayed up to ``now`` (ms), or None when nothing is due: no time has passed
    since its last decay (or less than ``min_days``), or its kind never decays."""
    days = (now - (memory.decayed_at or memory.created_at)) / MS_PER_DAY
    if days <= 0 or days < min_days or memory.confidence.tau <= 0:
        return None
    strength = decay_strength(memory.strength, memory.confidence.tau, days)
    return replace(
        memory,
        confidence=decay(memory.confidence, days),
        strength=strength,
        tier=tier_for(strength),
        decayed_at=now,
    )


def decay_some(store: Store, ids: Sequence[str], now: int, *, min_days: float = 0.0) -> Decayed:
    """Decay the live memories among ``ids`` up to ``now``, read afresh under the write lock
    and written in one transaction."""
    with store.write_lock():
        fresh = store.get_many(list(ids))
        changed = [d for m in fresh.values() if (d := decayed(m, now, min_days=min_days))]
        if changed:
            store.update_many(changed)
    demoted = sum(1 for d in changed if _tier_rank(d.tier) > _tier_rank(fresh[d.id].tier))
    return Decayed(len(changed), demoted)


def _tier_rank(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else len(TIERS)

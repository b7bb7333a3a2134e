"""An agent session's turn and the memories the model-free distiller makes of it (issue 22,
part 1; docs/distill.md).

A *turn* is what the Stop hook records: an episode memory of an agent session with the role
of who said it (``user`` or ``assistant``). Each fragment the rules find in it
(distill/rules.py) becomes a memory of its own, verbatim:

=============  ==============  ==================================================
label          kind            why that kind
=============  ==============  ==================================================
correction     ``correction``  looked up by key beside every recall (store/corrections.py)
preference     ``preference``  the user's lasting taste or habit
decision       ``approach``    a way chosen, with its reason
failure_fix    ``failure``     what went wrong, and what fixed it
=============  ==============  ==================================================

Each is tagged ``operational``, whose kind prior (0.8, seed 000: "ranks verbatim distiller
fragments below curated conclusions") ranks it below what an agent or a user stated on
purpose; its source is the turn's session and role, ``via`` :data:`VIA` (what cut it out)
and ``turns`` the turn's id (the link back, store/provenance.py), and it takes the turn's
episode and event time.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from chitta.distill.rules import Fragment
from chitta.store.confidence import INITIAL_STRENGTH, Confidence, tier_for
from chitta.store.kinds import DECAY_RATE, Kind
from chitta.store.provenance import DISTILLER
from chitta.store.records import ROLES, Memory, Source

#: The tag every fragment carries (its kind prior, recall/scoring_config.py).
TAG = "operational"
#: The kind of a fragment of each label.
KIND_OF: Mapping[str, Kind] = MappingProxyType({
    "correction": Kind.CORRECTION, "preference": Kind.PREFERENCE,
    "decision": Kind.APPROACH, "failure_fix": Kind.FAILURE,
})  # fmt: skip
#: A fragment's ``source.via``: the rules, and the version of them that cut it out.
VIA = f"{DISTILLER}rules/1"


def is_turn(memory: Memory) -> bool:
    """Whether ``memory`` is an agent session's turn (the Stop hook's episode)."""
    return (memory.kind is Kind.EPISODE and bool(memory.source.session)
            and memory.source.role in ROLES)  # fmt: skip


def fragment_memory(turn: Memory, fragment: Fragment, memory_id: str, now: int,
                    truncated: bool = False) -> Memory:  # fmt: skip
    """The memory of one ``fragment`` of ``turn``, created at ``now``."""
    kind = KIND_OF[fragment.label]
    return Memory(
        id=memory_id,
        kind=kind,
        content=fragment.text,
        realm=turn.realm,
        agent_id=turn.agent_id,
        channel=turn.channel,
        tags=(TAG,),
        source=Source(
            session=turn.source.session, role=turn.source.role, via=VIA, turns=(turn.id,)
        ),  # fmt: skip
        created_at=now,
        updated_at=now,
        event_time=turn.event_time,
        confidence=Confidence.initial(DECAY_RATE[kind]),
        strength=INITIAL_STRENGTH,
        tier=tier_for(INITIAL_STRENGTH),
        decayed_at=now,
        episode_id=turn.episode_id,
        truncated=truncated,
    )

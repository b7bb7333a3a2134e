"""Recall lanes: each finds candidates its own way and returns a ranked list.

A lane is any object with a ``name`` and a ``run(ctx) -> list[(memory id, raw score)]``.
:data:`LANES` maps the short names of DESIGN.md §4 to the lanes built so far; a new lane
plugs in by adding itself here and a weight in the recall presets. The correction lookup
(``corr``, lanes/corr.py) is not among them: it is keyed, not ranked, and never fused.
"""

from __future__ import annotations

from chitta.recall.lanes.base import Lane, LaneContext
from chitta.recall.lanes.code import CodeLane
from chitta.recall.lanes.common import CommonWordLane
from chitta.recall.lanes.ctx import ContextLane
from chitta.recall.lanes.dated import DatedLane
from chitta.recall.lanes.ep import EpisodeLane
from chitta.recall.lanes.graph import GraphLane
from chitta.recall.lanes.hdc import HdcLane
from chitta.recall.lanes.kw import KeywordLane
from chitta.recall.lanes.sem import SemanticLane
from chitta.recall.lanes.tag import TagLane
from chitta.recall.lanes.theme import ThemeLane
from chitta.recall.lanes.when import WhenLane
from chitta.recall.lanes.xr import CrossRealmLane

LANES: dict[str, Lane] = {
    lane.name: lane
    for lane in (
        SemanticLane(),
        KeywordLane(),
        TagLane(),
        HdcLane(),
        CrossRealmLane(),
        GraphLane(),
        ContextLane(),
        EpisodeLane(),
        ThemeLane(),
        CommonWordLane(),
        CodeLane(),
        WhenLane(),
        DatedLane(),
    )
}
#: Lanes that read the query's embedding: the pipeline embeds only when one of them runs.
NEEDS_VECTOR = frozenset({"sem", "hdc", "xr", "ep", "theme", "when"})
#: Lanes that find memories outside the recall's scope (marked as such): what only they found
#: never seeds the derived lanes, which would otherwise score it as if it were in scope.
OUTSIDE_SCOPE = frozenset({"xr"})

__all__ = ["LANES", "NEEDS_VECTOR", "OUTSIDE_SCOPE", "Lane", "LaneContext"]

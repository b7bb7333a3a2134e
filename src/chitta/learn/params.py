"""The parameters the resonance learner tunes, and how a sample of them changes a recall.

Seed 001 ("Self-Tuning"): the semantic vs keyword weight, spread strength and decay, the
Hebbian rate and the tag boost; and (issue 21) the weights of the lanes the strategy runs.
Each is either a value of its own (a share, a spread setting) or a *multiplier* of what the
preset says, so that one learned state fits every preset, and the preset's own values are
the prior means whatever they are:

==================  ======  ==========  ==============================================
parameter           prior   range       what it changes
==================  ======  ==========  ==============================================
``balance``         Beta    0.15-0.85   semantic vs keyword: ``sem × 2u``, ``kw × 2(1-u)``
``tag``             Gauss   0-3 ×       the tag boost (rsf) or the tag lane's weight (rrf)
``lane:<name>``     Gauss   0-3 ×       that lane's fusion weight (ctx, common, code, ...)
``spread_strength`` Beta    0.05-0.95   the graph lane's spread strength (seed: 0.5)
``spread_decay``    Beta    0.05-0.95   the graph lane's decay per hop (seed: 0.5)
``hebbian``         Gauss   0-3 ×       what a step of co-access is worth when spreading
==================  ======  ==========  ==============================================

``hebbian`` is the Hebbian rate as recall reads it: each answer that uses two memories
together adds the seed's 0.03 to their link, and the graph lane spreads over ``gain ×
weight`` (recall/lanes/graph.py); learning the gain rather than the step means what was
learned applies to the links already written. A parameter exists in a recall only when the
strategy runs what it changes (``spread_*`` and ``hebbian`` only with the graph lane).

Values are kept in *unit space*, ``u = (x - lo) / (hi - lo)`` in [0, 1], where the
posteriors live (learn/posterior.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from chitta.recall.config import RecallConfig

#: Lanes whose weight is not a ``lane:`` parameter: sem and kw are the balance, tag has its
#: own, xr is the cross-realm switch's, and corr is never fused.
NOT_LANE_PARAMS = frozenset({"sem", "kw", "tag", "xr", "corr"})
#: The graph lane's seed values (recall/lanes/graph.py: strength 0.5, decay 0.5).
SEED_SPREAD = 0.5


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One tuned parameter: its prior family (``beta`` or ``gauss``), its range in value
    space, its prior mean there, and (``gauss``) its prior standard deviation there."""

    name: str
    family: str
    lo: float
    hi: float
    prior: float
    sd: float = 0.0

    def unit(self, value: float) -> float:
        """``value`` in unit space, clamped to [0, 1]."""
        return min(1.0, max(0.0, (value - self.lo) / (self.hi - self.lo)))

    def value(self, unit: float) -> float:
        """The value of unit-space ``unit`` (clamped to the range)."""
        return self.lo + min(1.0, max(0.0, unit)) * (self.hi - self.lo)

    @property
    def prior_unit(self) -> float:
        return self.unit(self.prior)

    @property
    def prior_sd_unit(self) -> float:
        return self.sd / (self.hi - self.lo)


#: A multiplier's prior: 1 (the preset's value), 0.2 either way at one standard deviation.
MULTIPLIER_SD = 0.2


def multiplier(name: str) -> ParamSpec:
    return ParamSpec(name, "gauss", 0.0, 3.0, 1.0, MULTIPLIER_SD)


BALANCE = ParamSpec("balance", "beta", 0.15, 0.85, 0.5)
TAG = multiplier("tag")
SPREAD_STRENGTH = ParamSpec("spread_strength", "beta", 0.05, 0.95, SEED_SPREAD)
SPREAD_DECAY = ParamSpec("spread_decay", "beta", 0.05, 0.95, SEED_SPREAD)
HEBBIAN = multiplier("hebbian")
FIXED: Mapping[str, ParamSpec] = MappingProxyType(
    {p.name: p for p in (BALANCE, TAG, SPREAD_STRENGTH, SPREAD_DECAY, HEBBIAN)}
)


def spec(name: str) -> ParamSpec:
    """The spec of parameter ``name`` (``lane:<lane>`` for a lane's multiplier)."""
    return FIXED[name] if name in FIXED else multiplier(name)


def params_of(config: RecallConfig) -> tuple[str, ...]:
    """The parameters a recall under ``config`` has: those whose part it runs. A lane that
    rsf adds a fixed boost for (``dated`` in ``hybrid``) has no weight to scale."""
    lanes = config.lane_weights
    names = []
    if "sem" in lanes and "kw" in lanes:
        names.append("balance")
    if "tag" in lanes:
        names.append("tag")
    weighed = config.fusion_weights()
    names += [f"lane:{lane}" for lane in weighed if lane not in NOT_LANE_PARAMS]
    if "graph" in lanes:
        names += ["spread_strength", "spread_decay", "hebbian"]
    return tuple(names)


def acted(name: str, found: frozenset[str]) -> bool:
    """Whether parameter ``name`` changed anything in a recall whose lanes ``found``
    candidates: a weight acts only when its lane found something (both lanes, for the
    balance), the spread settings only when the graph lane did."""
    if name == "balance":
        return "sem" in found and "kw" in found
    if name.startswith("lane:"):
        return name[5:] in found
    if name == "tag":
        return "tag" in found
    return "graph" in found


def apply(config: RecallConfig, values: Mapping[str, float]) -> RecallConfig:
    """``config`` with the sampled ``values`` (value space, by parameter name): the fusion
    weights and the tag boost or weight scaled. The graph lane reads its own (``spread_*``,
    ``hebbian``) from the recall's tuning (recall/lanes/graph.py)."""
    if not values:
        return config
    weights = config.fusion_weights()
    u = values.get("balance")
    if u is not None:
        weights["sem"] = weights["sem"] * 2 * u
        weights["kw"] = weights["kw"] * 2 * (1 - u)
    for lane in list(weights):
        if (m := values.get(f"lane:{lane}")) is not None:
            weights[lane] = weights[lane] * m
    tag = values.get("tag")
    if config.fusion == "rsf":
        boosts = dict(config.rsf_boosts)
        if tag is not None and "tag" in boosts:
            boosts["tag"] = boosts["tag"] * tag
        return replace(config, rsf_lanes=MappingProxyType(weights),
                       rsf_boosts=MappingProxyType(boosts))  # fmt: skip
    if tag is not None and "tag" in weights:
        weights["tag"] = weights["tag"] * tag
    return replace(config, lane_weights=MappingProxyType(weights))

"""The scoring stage's settings: a frozen :class:`ScoringConfig`, read from ``scoring.json``.

The file lives in the data directory (``$CHITTA_HOME/scoring.json``); without it the built-in
defaults apply, which are seed 000's values. Every key is optional; a malformed file, an
unknown key or a value outside its range is a :class:`BadConfig` naming the key. The format,
ranges and formulas are in docs/recall.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType

from chitta.errors import BadConfig
from chitta.store.kinds import Kind

FILE_NAME = "scoring.json"

#: Seed 000's kind priors; a kind not named here has 1.0.
SEED_KIND_PRIORS: Mapping[str, float] = MappingProxyType(
    {
        "correction": 1.3,
        "preference": 1.3,
        "wisdom": 1.1,
        "insight": 1.05,
        "operational": 0.8,
        "episode": 0.7,
    }
)
#: Fine-grained kinds the seed names that are not among the 26 kinds: seed 000's "operational"
#: (verbatim distiller fragments). A memory carries one as a tag; its prior then replaces the
#: kind's (the finer label wins).
EXTRA_PRIOR_NAMES = frozenset({"operational"})
KIND_PRIOR_RANGE = (0.5, 1.5)
#: The provenance spine's trust per source kind (store/provenance.py): the user's words and
#: what was remembered on purpose above a file, a model's summary, the agent's own replies,
#: a tool's output and web text (seed 001's ProvenanceSpine; issue 22). Multipliers inside
#: the scoring stage's clamp. ``assistant`` keeps its measured 0.8 (docs/benchmarks.md).
DEFAULT_TRUST: Mapping[str, float] = MappingProxyType({
    "stated": 1.0, "user": 1.0, "import": 1.0, "file": 0.95, "distiller": 0.9,
    "assistant": 0.8, "tool": 0.7, "url": 0.6,
})  # fmt: skip
TRUST_RANGE = (0.5, 1.2)
#: The longest per-source trust prefix (a URL, a path, a distiller's name).
MAX_SOURCE_PREFIX = 1024
#: Per-source trust entries a file may give.
MAX_SOURCE_TRUSTS = 256
REPLICATION_RANGE = (1.0, 1.5)  # or 0: off


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """Weights and bounds of the scoring stage, lateral inhibition and Hebbian co-access."""

    kind_priors: Mapping[str, float] = field(default_factory=lambda: SEED_KIND_PRIORS)
    # 0: measured to hurt on LoCoMo when it discriminates (docs/benchmarks.md); 0.1 turns it on.
    actr_weight: float = 0.0  # multiplier within 1 ± weight
    actr_decay: float = 0.5  # d of Anderson & Schooler (1991)
    actr_reference_s: float = 86_400.0  # one access this long ago is neutral (factor 1)
    actr_scale: float = 2.0  # activation units to tanh's unit
    strength_weight: float = 0.1
    confidence_weight: float = 0.1
    tier_weight: float = 0.05
    replication_max: float = 0.0  # 0 = off; else the cap of the replication factor
    # The provenance factor: trust per source kind, and per source (``<kind>:<name>``
    # prefixes, longest first) over it. The assistant's own recorded answer ranks below a
    # user's statement of equal relevance, never removed.
    trust: Mapping[str, float] = field(default_factory=lambda: DEFAULT_TRUST)
    source_trust: tuple[tuple[str, float], ...] = ()
    # A question about what the agent itself said ("what was the sealant you recommended?",
    # recall/query.py) seeks the agent's words: for it the assistant's trust is raised to
    # this (never lowered); None keeps the table's trust for every question.
    asked_agent_trust: float | None = 1.0
    bounds_min: float = 0.5  # the product of all factors is clamped to [min, max]
    bounds_max: float = 1.5
    inhibition_threshold: float = 0.85  # cosine above which near-duplicates compete
    inhibition_strength: float = 0.7
    hebbian_step: float = 0.03  # co-access weight added per answer that used both (cap 1)
    hebbian_top: int = 5  # pairs among at most this many memories one answer used

    def prior(self, kind: Kind | str, tags: tuple[str, ...] = ()) -> float:
        """The prior of a memory of ``kind`` with ``tags`` (a fine-grained kind tag wins)."""
        for tag in tags:
            if tag in EXTRA_PRIOR_NAMES and tag in self.kind_priors:
                return self.kind_priors[tag]
        return self.kind_priors.get(str(kind), 1.0)

    def asked_of_agent(self) -> ScoringConfig:
        """This config for a question that asks what the agent said: the assistant's words
        trusted at least :attr:`asked_agent_trust`."""
        lifted = self.asked_agent_trust
        if lifted is None or self.trust.get("assistant", 1.0) >= lifted:
            return self
        return replace(self, trust=MappingProxyType({**self.trust, "assistant": lifted}))

    def trusted(self, kind: str, name: str | None) -> float:
        """The trust in a source of ``kind`` named ``name`` (store/provenance.py): the
        longest per-source prefix of ``name`` that is configured, else the kind's."""
        if name is not None:
            for prefix, value in self.source_trust:  # longest first
                if name.startswith(prefix):
                    return value
        return self.trust.get(kind, 1.0)


#: (section, key) of the file -> (field, lowest, highest). Ranges are inclusive.
_RANGES: Mapping[tuple[str, str], tuple[str, float, float]] = MappingProxyType(
    {
        ("actr", "weight"): ("actr_weight", 0.0, 0.25),
        ("actr", "decay"): ("actr_decay", 0.05, 0.95),
        ("actr", "reference_s"): ("actr_reference_s", 1.0, 3.2e9),
        ("actr", "scale"): ("actr_scale", 0.1, 20.0),
        ("strength", "weight"): ("strength_weight", 0.0, 0.25),
        ("confidence", "weight"): ("confidence_weight", 0.0, 0.25),
        ("tier", "weight"): ("tier_weight", 0.0, 0.25),
        ("bounds", "min"): ("bounds_min", 0.25, 1.0),
        ("bounds", "max"): ("bounds_max", 1.0, 4.0),
        ("inhibition", "threshold"): ("inhibition_threshold", 0.5, 0.999),
        ("inhibition", "strength"): ("inhibition_strength", 0.0, 1.0),
        ("hebbian", "step"): ("hebbian_step", 0.0, 0.5),
        ("hebbian", "top"): ("hebbian_top", 0, 50),
    }
)
_SECTIONS = frozenset(section for section, _ in _RANGES)
_TOP_KEYS = ("kind_priors", "replication_max", "provenance", *sorted(_SECTIONS))
DEFAULT = ScoringConfig()


def _number(value: object, label: str, lo: float, hi: float, *, integer: bool = False) -> float:
    """``value`` as a number within [lo, hi]; ``label`` names it in the error."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadConfig(f"{label} must be a number, got {value!r}")
    if integer and value != int(value):
        raise BadConfig(f"{label} must be a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise BadConfig(f"{label} must be between {lo:g} and {hi:g}, got {value!r}")
    return int(value) if integer else float(value)


def _kind_priors(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        raise BadConfig(f"{FILE_NAME}: kind_priors must be an object of kind: prior")
    known = {k.value for k in Kind} | EXTRA_PRIOR_NAMES
    priors = dict(SEED_KIND_PRIORS)
    for name, prior in value.items():
        if name not in known:
            raise BadConfig(
                f"{FILE_NAME}: unknown kind 'kind_priors.{name}'; kinds are: "
                f"{', '.join(sorted(known))}"
            )
        priors[name] = _number(prior, f"{FILE_NAME}: kind_priors.{name}", *KIND_PRIOR_RANGE)
    return priors


def _provenance(value: object) -> dict[str, object]:
    """The ``provenance`` section: a trust per source kind, and ``sources``, a trust per
    source prefix (``"url:https://docs.python.org/": 1.0``)."""
    if not isinstance(value, dict):
        raise BadConfig(f"{FILE_NAME}: provenance must be an object")
    trust = dict(DEFAULT_TRUST)
    sources: dict[str, float] = {}
    for name, number in value.items():
        label = f"{FILE_NAME}: provenance.{name}"
        if name == "sources":
            if not isinstance(number, dict) or len(number) > MAX_SOURCE_TRUSTS:
                raise BadConfig(
                    f"{label} must be an object of at most {MAX_SOURCE_TRUSTS} "
                    '"<kind>:<name prefix>": trust entries'
                )
            for prefix, each in number.items():
                if not prefix or len(prefix) > MAX_SOURCE_PREFIX or ":" not in prefix:
                    raise BadConfig(
                        f"{label} has a key that is not a source prefix such as "
                        f'"url:https://example.org/" or "file:/path/": {prefix[:80]!r}'
                    )
                sources[prefix] = _number(each, f"{label}.{prefix}", *TRUST_RANGE)
        elif name in DEFAULT_TRUST:
            trust[name] = _number(number, label, *TRUST_RANGE)
        else:
            raise BadConfig(
                f"{FILE_NAME}: unknown key 'provenance.{name}'; provenance has: "
                f"{', '.join(DEFAULT_TRUST)}, sources"
            )
    ordered = tuple(sorted(sources.items(), key=lambda item: -len(item[0])))
    return {"trust": MappingProxyType(trust), "source_trust": ordered}


def replication_cap(value: object, label: str) -> float:
    """A replication cap: 0 (off) or within :data:`REPLICATION_RANGE`."""
    if value == 0 and not isinstance(value, bool):
        return 0.0
    return _number(value, label, *REPLICATION_RANGE)


def parse(data: object) -> ScoringConfig:
    """A :class:`ScoringConfig` from the decoded JSON of a scoring file."""
    if not isinstance(data, dict):
        raise BadConfig(f"{FILE_NAME} must hold a JSON object")
    changes: dict[str, object] = {}
    for key, value in data.items():
        if key == "kind_priors":
            changes["kind_priors"] = MappingProxyType(_kind_priors(value))
        elif key == "provenance":
            changes.update(_provenance(value))
        elif key == "replication_max":
            changes["replication_max"] = replication_cap(value, f"{FILE_NAME}: replication_max")
        elif key in _SECTIONS:
            if not isinstance(value, dict):
                raise BadConfig(f"{FILE_NAME}: {key} must be an object")
            for sub, number in value.items():
                spec = _RANGES.get((key, sub))
                if spec is None:
                    subs = sorted(s for sec, s in _RANGES if sec == key)
                    raise BadConfig(
                        f"{FILE_NAME}: unknown key '{key}.{sub}'; {key} has: {', '.join(subs)}"
                    )
                name, lo, hi = spec
                label = f"{FILE_NAME}: {key}.{sub}"
                changes[name] = _number(number, label, lo, hi, integer=sub == "top")
        else:
            raise BadConfig(
                f"{FILE_NAME}: unknown key {key!r}; the keys are: {', '.join(_TOP_KEYS)}"
            )
    config = replace(DEFAULT, **changes)
    if config.bounds_min > config.bounds_max:
        raise BadConfig(f"{FILE_NAME}: bounds.min must not exceed bounds.max")
    return config


def load_scoring(home: Path, replication_max: float | None = None) -> ScoringConfig:
    """The scoring settings of the data directory ``home``; ``replication_max`` (from
    ``CHITTA_REPLICATION_MAX``) overrides the file's."""
    path = home / FILE_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        config = DEFAULT
    except OSError as exc:
        raise BadConfig(f"cannot read {path}: {exc.strerror}") from None
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadConfig(f"{path} is not valid JSON: {exc}") from None
        config = parse(data)
    if replication_max is not None:
        config = replace(config, replication_max=replication_max)
    return config


def as_dict(config: ScoringConfig) -> dict[str, object]:
    """The settings in the file's shape (what ``scoring.json`` would say for them)."""
    out: dict[str, object] = {
        "kind_priors": dict(config.kind_priors),
        "replication_max": config.replication_max,
        "provenance": {**config.trust, "sources": dict(config.source_trust)},
    }
    by_field = {name: key for key, (name, _, _) in _RANGES.items()}
    for f in fields(config):
        if f.name in by_field:
            section, sub = by_field[f.name]
            out.setdefault(section, {})[sub] = getattr(config, f.name)  # type: ignore[index]
    return out

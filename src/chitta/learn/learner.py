"""The resonance learner (seed 001, "Self-Tuning"): Thompson sampling over recall's
parameters (learn/params.py), conditioned on the query's context (learn/context.py), with
credit from the feedback an agent gives.

**Sampling.** Each recall that records its access draws its parameters from their posteriors
(learn/posterior.py) for its context bucket, and the draw is a function of the realm, the
strategy, the query and how many feedback events the realm has had: the same question asked
twice with nothing learned in between gets the same answer, and every feedback event moves
the draws on. Until a realm's first feedback event nothing is drawn: the preset runs exactly
as it would without a learner. A recall that records nothing (a measurement, ``record=False``)
uses the posterior means. What was used is the recall's ``tuning`` (the trace's
``policy.learner``).

**Credit.** The learner keeps the last :data:`KEPT_RECALLS` recalls' returned ids and draws
(in this process, for :data:`MAX_AGE_MS`). A feedback event on a memory finds the newest of
them that returned it (the same agent session's first, for the Stop hook) and scores it
``value × weight / log2(1 + rank)``: ``value`` +1 for ``strengthen`` and for an answer that
drew on the memory (recall/usage.py; ``weight`` :data:`IMPLICIT_WEIGHT`), -1 for
``weaken``. So an event is worth most about the first row, as nDCG counts it. Its advantage is
that score minus the bucket's usual score (the baseline: the mean of its scores, over about
the last 100 once it has had that many; the strategy's when the bucket has had fewer than
:data:`MIN_BASELINE` events). A recall's advantage is the sum
of its events', bounded to [-1, 1]: with a baseline, the many events of one recall add up to
its DCG above the usual. Every parameter the recall drew and that acted in it
(learn/params.py ``acted``) holds one observation for the recall
(:func:`~chitta.learn.posterior.observe`, times :data:`RATE`), replaced as its events come:
a recall that put the strengthened memory first and the weakened ones low teaches its draw,
one that did the opposite teaches the mirror image, and one whose events cancel out teaches
nothing.

**Contexts share.** A bucket's posterior counts its own evidence in full and the other
buckets' at :data:`SHARED` weight: what is learned anywhere moves every bucket, what is
learned in one moves it most.

**State** lives in the store's meta, ``learner:<realm>``, written with each feedback event (a
write already) and read at the realm's first recall: it survives restarts, on both backends.
``CHITTA_LEARN=0`` turns the learner off for the process, ``chitta learn --off`` for a realm,
``chitta learn --reset`` forgets a realm's state (its recalls are the preset's again).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.learn.context import QueryContext
from chitta.learn.params import acted, apply, params_of, spec
from chitta.learn.posterior import Evidence, draw, observe, posterior
from chitta.recall.config import RecallConfig

if TYPE_CHECKING:
    from chitta.recall.result import RecallResult
    from chitta.store.base import Store

log = logging.getLogger(__name__)

META_PREFIX = "learner:"
STATE_VERSION = 1
#: Recalls kept for credit, and for how long (a feedback event later than this credits none).
KEPT_RECALLS = 1024
MAX_AGE_MS = 86_400_000
#: The weight of implicit use (an answer drew on an injected memory) beside a strengthen.
IMPLICIT_WEIGHT = 0.5
#: Each event's advantage is worth this many observations (at most; learn/posterior.py's
#: prior is worth 25).
RATE = 1.0
#: A bucket uses its own baseline once it has had this many events.
MIN_BASELINE = 20
#: The baseline's moving-average rate once it has seen 1 / rate events (about the last 100).
BASELINE_RATE = 0.01
#: The weight of other buckets' evidence in a bucket's posterior.
SHARED = 0.5
ALL = "*"


@dataclass(frozen=True, slots=True)
class Tuning:
    """What the learner set for one recall: the context bucket, each parameter's value (value
    space), whether they were drawn (else the posterior means), and the realm's events."""

    context: str
    values: Mapping[str, float]
    sampled: bool
    events: int
    #: The fusion weights the recall ran with, when the learner changed them.
    weights: Mapping[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "sampled": self.sampled,
            "feedback": self.events,  # the realm's feedback events so far
            "params": {k: round(v, 4) for k, v in self.values.items()},
            "weights": {k: round(v, 4) for k, v in self.weights.items()},
        }


@dataclass(slots=True)
class _Recall:
    """A recall kept for credit: whose state, under what, what it returned, what it drew."""

    key: str
    strategy: str
    context: str
    ranks: dict[str, int]
    units: dict[str, float]  # the drawn parameters that acted, unit space
    session: str | None
    at: int
    #: The advantage its feedback events added up to, the posterior means the first event
    #: saw, and the evidence it has added so far (replaced at each event).
    advantage: float = 0.0
    means: dict[str, float] = field(default_factory=dict)
    applied: dict[str, Evidence] = field(default_factory=dict)


@dataclass(slots=True)
class _Strategy:
    """One strategy's evidence and baselines within a realm's state."""

    evidence: dict[str, dict[str, Evidence]] = field(default_factory=dict)  # bucket -> param
    baseline: dict[str, list[float]] = field(default_factory=dict)  # bucket or * -> [n, mean]

    def combined(self, bucket: str, name: str) -> Evidence:
        own = self.evidence.get(bucket, {}).get(name, Evidence())
        others = Evidence()
        for b, params in self.evidence.items():
            if b != bucket and name in params:
                others = others + params[name]
        return own + others.scaled(SHARED)

    def pooled(self, name: str) -> Evidence:
        """Every bucket's evidence on ``name``, in full."""
        total = Evidence()
        for params in self.evidence.values():
            total = total + params.get(name, Evidence())
        return total

    def expected(self, bucket: str) -> float:
        n, mean = self.baseline.get(bucket, [0.0, 0.0])
        return mean if n >= MIN_BASELINE else self.baseline.get(ALL, [0.0, 0.0])[1]

    def observe_reward(self, bucket: str, reward: float) -> None:
        for b in (bucket, ALL):
            entry = self.baseline.setdefault(b, [0.0, 0.0])
            entry[0] += 1
            # The mean of the events so far, then a moving one: rewards drift as feedback
            # changes the memories' strength, and the baseline must follow.
            entry[1] += (reward - entry[1]) * max(1 / entry[0], BASELINE_RATE)


@dataclass(slots=True)
class RealmState:
    """A realm's learned state: feedback events so far, whether it is off, per strategy."""

    events: int = 0
    off: bool = False
    strategies: dict[str, _Strategy] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({
            "version": STATE_VERSION, "events": self.events, "off": self.off,
            "strategies": {
                name: {
                    "evidence": {b: {p: [e.weight, e.total] for p, e in ps.items()}
                                 for b, ps in s.evidence.items()},
                    "baseline": s.baseline,
                }
                for name, s in self.strategies.items()
            },
        }, separators=(",", ":"))  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> RealmState:
        """The state a :meth:`to_json` wrote; ValueError for anything else."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError("not a learner state of version 1")
        state = cls(events=int(data["events"]), off=bool(data["off"]))
        for name, s in data["strategies"].items():
            evidence = {
                str(b): {str(p): Evidence(_finite(w), _finite(t)) for p, (w, t) in ps.items()}
                for b, ps in s["evidence"].items()
            }
            baseline = {str(b): [_finite(n), _finite(m)] for b, (n, m) in s["baseline"].items()}
            state.strategies[str(name)] = _Strategy(evidence, baseline)
        return state


def _finite(value: object) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise ValueError("a learner state holds a number that is not finite")
    return number


class Learner:
    """The resonance learner of one store (module docstring). ``enabled`` false
    (``CHITTA_LEARN=0``) makes it do nothing; ``shared`` learns one state for every realm
    under that name (a benchmark learning on some realms and measuring on others)."""

    def __init__(
        self,
        store: Store,
        *,
        enabled: bool = True,
        shared: str | None = None,
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.shared = shared
        self._states: dict[str, RealmState] = {}
        self._recalls: deque[_Recall] = deque(maxlen=KEPT_RECALLS)
        self._lock = threading.Lock()  # the states and the kept recalls
        self._writing = threading.Lock()  # one state write at a time, in the order of changes

    # --- recall --------------------------------------------------------------------------------

    def tune(
        self,
        realm: str,
        strategy: str,
        config: RecallConfig,
        query: str,
        context: QueryContext,
        *,
        explore: bool,
    ) -> tuple[RecallConfig, Tuning | None]:
        """``config`` as the learner sets it for ``query`` in ``realm``, and what it set
        (None: the learner is off, or the strategy has nothing it tunes; no values: the realm
        has no feedback yet, and the preset runs as it is)."""
        if not self.enabled:
            return config, None
        key = self._key(realm)
        names = params_of(config)
        with self._lock:
            state = self._state(key)
            learned = state.strategies.get(strategy)
            if state.off or not names:
                return config, None
            bucket = context.bucket
            if state.events == 0 and learned is None:
                # Nothing learned: the preset as it is (kept for credit all the same).
                return config, Tuning(bucket, MappingProxyType({}), False, state.events)
            learned = learned or _Strategy()
            evidence = {n: learned.combined(bucket, n) for n in names}
            events = state.events
        sampled = explore and events > 0
        if sampled:
            rng = np.random.default_rng(_seed(key, strategy, query, events))
            units = {n: draw(spec(n), evidence[n], rng) for n in names}
        else:
            units = {n: posterior(spec(n), evidence[n]).mean for n in names}
        values = {n: spec(n).value(u) for n, u in units.items()}
        tuned = apply(config, values)
        weights = MappingProxyType(
            tuned.fusion_weights() | dict(tuned.rsf_boosts)
            if tuned.fusion == "rsf"
            else tuned.fusion_weights()
        )
        return tuned, Tuning(bucket, MappingProxyType(values), sampled, events, weights)

    def note(
        self, realm: str, strategy: str, result: RecallResult, session: str | None, at: int
    ) -> None:
        """Keep a recorded recall under ``strategy`` for credit (only one the learner
        tuned)."""
        tuning = result.tuning
        if tuning is None or not result.hits:
            return
        found = frozenset(lane for d in result.decisions for lane in d.lanes)
        units = {}
        if tuning.sampled:
            units = {n: spec(n).unit(v) for n, v in tuning.values.items() if acted(n, found)}
        ranks = {h.memory.id: rank for rank, h in enumerate(result.hits, 1)}
        record = _Recall(self._key(realm), strategy, tuning.context, ranks, units,
                         session, at)  # fmt: skip
        with self._lock:
            self._recalls.append(record)

    # --- credit --------------------------------------------------------------------------------

    def credit(
        self,
        memory_ids: Sequence[str],
        value: float,
        *,
        weight: float = 1.0,
        session: str | None = None,
        now: int,
    ) -> int:
        """Credit each of ``memory_ids`` (``value`` +1: it helped; -1: it did not) to the
        newest kept recall that returned it; how many found one. Saves the states changed."""
        if not self.enabled:
            return 0
        credited = 0
        with self._changing() as changed:
            for memory_id in memory_ids:
                record = self._find(memory_id, session, now)
                if record is None:
                    continue
                state = self._state(record.key)
                if state.off:
                    continue
                rank = record.ranks[memory_id]
                self._credit(state, record, value * weight / math.log2(1 + rank))
                credited += 1
                changed.add(record.key)
        return credited

    def _credit(self, state: RealmState, record: _Recall, reward: float) -> None:
        """One event's ``reward`` credited to ``record``: its advantage joins the recall's, and
        the recall's evidence is replaced by that of its new total (one observation per
        recall, however many events it gets)."""
        learned = state.strategies.setdefault(record.strategy, _Strategy())
        record.advantage += reward - learned.expected(record.context)
        learned.observe_reward(record.context, reward)
        state.events += 1
        params = learned.evidence.setdefault(record.context, {})
        net = max(-1.0, min(1.0, record.advantage)) * RATE
        for name, used in record.units.items():
            if name not in record.means:  # the mirror's centre: the mean at the first event
                record.means[name] = posterior(
                    spec(name), learned.combined(record.context, name)
                ).mean
            new = observe(used, record.means[name], net)
            old = record.applied.get(name, Evidence())
            params[name] = params.get(name, Evidence()) + new - old
            record.applied[name] = new

    def _find(self, memory_id: str, session: str | None, now: int) -> _Recall | None:
        """The newest kept recall that returned ``memory_id``: one of ``session`` that drew
        its parameters first, then one of the session, then one that drew, then any (the
        prompt hook asks several recalls at once; the session's is the one it primed)."""
        best: tuple[int, _Recall] | None = None
        for record in reversed(self._recalls):
            if now - record.at > MAX_AGE_MS:
                break
            if memory_id not in record.ranks:
                continue
            mine = session is None or record.session == session
            rank = (0 if mine else 2) + (0 if record.units else 1)
            if best is None or rank < best[0]:
                best = (rank, record)
            if rank == 0:
                break
        return None if best is None else best[1]

    # --- state ---------------------------------------------------------------------------------

    def status(self, realm: str) -> dict[str, Any]:
        """What the learner holds for ``realm``: each strategy's parameters (the preset's
        value, the learned mean and spread, the range) and its events per context."""
        key = self._key(realm)
        with self._lock:
            state = self._state(key)
            strategies = {}
            for name, learned in sorted(state.strategies.items()):
                params = {}
                for p in sorted({p for ps in learned.evidence.values() for p in ps}):
                    s = spec(p)
                    post = posterior(s, learned.pooled(p))
                    params[p] = {"preset": s.prior, "mean": round(s.value(post.mean), 4),
                                 "sd": round(post.sd * (s.hi - s.lo), 4),
                                 "range": [s.lo, s.hi]}  # fmt: skip
                contexts = {b: int(n) for b, (n, _) in sorted(learned.baseline.items()) if b != ALL}
                strategies[name] = {"params": params, "contexts": contexts}
            return {"realm": realm, "learning": self._mode(state), "events": state.events,
                    "strategies": strategies}  # fmt: skip

    def reset(self, realm: str) -> int:
        """Forget what ``realm`` learned (it stays on or off as it was); the events forgotten."""
        key = self._key(realm)
        with self._changing() as changed:
            state = self._state(key)
            forgotten = state.events
            self._states[key] = RealmState(off=state.off)
            self._recalls = deque((r for r in self._recalls if r.key != key),
                                  maxlen=KEPT_RECALLS)  # fmt: skip
            changed.add(key)
        return forgotten

    def switch(self, realm: str, on: bool) -> None:
        """Turn learning on or off for ``realm`` (kept; what was learned is kept too)."""
        key = self._key(realm)
        with self._changing() as changed:
            self._state(key).off = not on
            changed.add(key)

    def _mode(self, state: RealmState) -> str:
        if not self.enabled:
            return "off (CHITTA_LEARN=0)"
        return "off (this realm)" if state.off else "on"

    def _key(self, realm: str) -> str:
        return self.shared if self.shared is not None else realm

    def _state(self, key: str) -> RealmState:
        state = self._states.get(key)
        if state is None:
            state = self._load(key)
            self._states[key] = state
        return state

    def _load(self, key: str) -> RealmState:
        text = self.store.meta(META_PREFIX + key)
        if text is None:
            return RealmState()
        try:
            return RealmState.from_json(text)
        except (ValueError, KeyError, TypeError, AttributeError):
            # A damaged state must not stop recall: the realm starts again from the preset
            # (its next feedback event writes a good one).
            log.warning("the learner's state of a realm is unreadable; starting from the preset")
            return RealmState()

    @contextmanager
    def _changing(self) -> Iterator[set[str]]:
        """Change states under the state lock (the body adds the keys it changed), then
        write them under the write lock alone: one write at a time, in the order of the
        changes, and no recall waits for a commit's sync to disk to draw."""
        changed: set[str] = set()
        with self._writing:
            with self._lock:
                yield changed
                saved = {key: self._snapshot(key) for key in changed}
            self._write(saved)

    def _snapshot(self, key: str) -> str | None:
        """The state of ``key`` as it is to be written (None: nothing to keep). Under the
        state lock."""
        state = self._states[key]
        if state.events == 0 and not state.off and not state.strategies:
            return None
        return state.to_json()

    def _write(self, saved: Mapping[str, str | None]) -> None:
        """Write the snapshots (under the write lock, not the state lock: a write waits for
        its commit's sync to disk, and a recall must not wait for that to draw)."""
        for key, text in saved.items():
            if text is None:
                self.store.delete_meta(META_PREFIX + key)
            else:
                self.store.set_meta(META_PREFIX + key, text)


def _seed(key: str, strategy: str, query: str, events: int) -> int:
    digest = hashlib.blake2b(f"{key}\0{strategy}\0{query}\0{events}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big")

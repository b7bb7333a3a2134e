"""Does this store know anything about the question? The calibrated maximum relevance.

Seed 000 (Recall pipeline): a recall reports one scalar, the store's maximum relevance for the
query, passed through a Platt fit (Platt 1999: a logistic ``p = sigmoid(a·x + b)`` fitted to
"the top 3 holds a gold memory" against the raw value ``x``). It is split into two bands on
the calibrated value — KNOWN (the seed's confident-but-verify band) and UNKNOWN — and shown to
the model as a percentage that has its own logistic refit over ``logit(p)``, because the raw
Platt value drifts over-confident on a store it was not fitted on (the seed: ECE 0.31 raw,
0.159 refit). The band stays on the raw calibrated value (before the words held lift its
ceiling, below); only the number shown is refitted.

The raw maximum relevance is the highest cosine between the embedding of the whole query (its
common words included: a name the store never saw is the clearest sign it cannot answer) and
the memories the recall ranked. On LoCoMo it separates answerable from unanswerable questions
with an AUROC of 0.98 (docs/benchmarks.md, "Honest recall").

The same cosine does not mean the same in every store: the best of a few hundred chat turns is
often a near miss, the best of one memory is not. So the fit is made on the cosine less what
the store's size alone would lend it, ``raw − spread·√(2 ln N)`` for a realm of ``N`` live
memories: the expected maximum of ``N`` unrelated cosines grows as ``σ·√(2 ln N)`` (the
extreme value of ``N`` Gaussian draws; Cramér 1946, Leadbetter et al. 1983), and ``spread``
is fitted with the Platt slope (a logistic over both) on stores of one to five memories beside
the benchmark's conversations (issue 19).

A fit may have a ceiling, ``p = c·sigmoid(…)`` with ``0 < c ≤ 1``: on LoCoMo the top 3 holds a
gold turn about 55 % of the time however sure the store is that it knows the topic, a plateau a
plain logistic cannot bend into (its ECE stayed at 0.082). ``c`` is chosen by likelihood over a
grid (:func:`fit_capped`); the value stays monotonic in the cosine, so the KNOWN/UNKNOWN split
of seed 000 is the plain fit's, at a threshold on the same ordering. The plateau is the
retriever's, so it cannot hold in a store its top 3 takes in whole: with a ``reach`` of 3 the
ceiling of a realm of ``N`` memories is ``1 − (1 − c)·max(0, 1 − 3/N)`` (:func:`ceiling_at`),
1 up to three memories and ``c`` in a big store; the value stays monotonic in the cosine
within a realm, and the band's threshold is on the same scale everywhere.

The cosine has a second witness: the words. A question's distinctive words (the rare ones the
keyword lane searches by, recall/query.py) are mostly all in a memory that answers it, and
partly or not at all in the best of a store that cannot: ``found``, how many of them one of
the first three hits holds, by Laplace's rule of succession (:func:`found_share`; matched as
the keyword lane matches), enters the same logistic with a weight of its own,
``a·x + found_weight·found + b``. On LongMemEval's user–assistant stores, whose short
questions meet their answer in one sentence of a long turn, the cosine alone put 30 % of the
answerable questions in UNKNOWN (docs/benchmarks.md, "The words found beside the cosine"). A
fit without the weight (0: every fit stored before it) is the cosine alone. The value rises
with each of the two, so the band is still one threshold on one ordering (Laplace 1814, the
rule of succession).

The ceiling has a second witness too. LoCoMo's plateau is the retriever's when nothing in
the question pins the answer down: with one of the question's distinctive words in the first
hit, the top 3 holds a gold turn about two times in five; with three, two in three; with six
or more, nearly always (docs/benchmarks.md, "A ceiling the words lift"). So the miss of the
ceiling also shrinks by ``e^(−word_decay·held)`` for ``held`` distinctive words the first hit
holds (:func:`ceiling_at`; ``word_decay`` fitted with the ceiling by likelihood, 0 in fits
stored before it: the same ceiling for every question). The words held lift the chance that
the top 3 holds the answer — how precisely the question points — not the band: whether the
store knows the topic is read, as before, from the cosine, the words found and the realm's
size, so the band's threshold splits the value before the words held lift it (``signal``),
and the value the percentage shows rises with the words held too.

Pure functions: the fits (Newton's method on the logistic log-likelihood), the expected
calibration error (Guo et al. 2017, ten equal-width bins) and AUROC (Mann–Whitney U).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from chitta.errors import BadArgument

KNOWN = "KNOWN"
UNKNOWN = "UNKNOWN"
#: What the fitted value is; a stored fit of another feature is not applied to this one
#: ("max-cosine-v1" was the raw cosine alone, before the store's size was allowed for).
FEATURE = "max-cosine-by-size-v2"
#: Bins of the expected calibration error.
ECE_BINS = 10
#: Fewer pairs than this, or only one outcome among them, cannot be fitted.
MIN_PAIRS = 10


@dataclass(frozen=True, slots=True)
class Calibration:
    """A Platt fit of the size-adjusted maximum relevance, the band threshold and the display
    refit.

    ``p = ceiling_at(ceiling, N, reach, held, word_decay)·sigmoid(a·(raw − spread·√(2 ln N))
    + found_weight·found + b)`` for a realm of ``N`` memories whose first hits hold ``found`` of
    the question's distinctive words (:func:`found_share`), ``held`` of them the first hit
    (:func:`words_held`); KNOWN when the same value with ``held`` 0 (the band's signal, see
    the module) is at least ``threshold``; the percentage shown is
    ``100·sigmoid(display_a·logit(p) + display_b)`` (identity: 1 and 0). ``spread`` 0 and
    ``ceiling`` 1: Platt on the raw cosine alone; ``reach`` 0 (a fit stored before it was
    added): the same ceiling in a realm of any size; ``found_weight`` 0: the cosine alone;
    ``word_decay`` 0: the same ceiling however many words the first hit holds.
    """

    a: float
    b: float
    threshold: float
    display_a: float = 1.0
    display_b: float = 0.0
    source: str = "default"
    pairs: int = 0
    fitted_at: str | None = None
    feature: str = FEATURE
    #: The embedding model whose cosines were fitted (its identity's name); None: unknown.
    model: str | None = None
    #: How much of the cosine a realm's size alone lends (see the module), 0 or more.
    spread: float = 0.0
    #: The highest chance the fit gives (0..1]: the retriever's own ceiling (see the module).
    ceiling: float = 1.0
    #: The depth the ceiling gives way to (:func:`ceiling_at`); 0: a ceiling at every size.
    reach: int = 0
    #: The weight of the words found (:func:`found_share`, the module); 0: the cosine alone.
    found_weight: float = 0.0
    #: How much each distinctive word the first hit holds shrinks the ceiling's miss
    #: (:func:`ceiling_at`); 0: the same ceiling for every question.
    word_decay: float = 0.0

    def __post_init__(self) -> None:
        numbers = (self.a, self.b, self.threshold, self.display_a, self.display_b, self.spread,
                   self.ceiling, self.found_weight, self.word_decay)  # fmt: skip
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                   for v in numbers):  # fmt: skip
            raise BadArgument("a calibration's coefficients must be finite numbers")
        texts = {"source": self.source, "feature": self.feature}
        optional = {"fitted_at": self.fitted_at, "model": self.model}
        if not all(isinstance(v, str) for v in texts.values()) or not all(
            v is None or isinstance(v, str) for v in optional.values()
        ):
            raise BadArgument("a calibration's source, feature, model and date must be text")
        if isinstance(self.pairs, bool) or not isinstance(self.pairs, int) or self.pairs < 0:
            raise BadArgument("a calibration's pair count must be a whole number")
        if not 0.0 < self.threshold < 1.0:
            raise BadArgument(f"the band threshold must lie between 0 and 1, got {self.threshold}")
        if self.a <= 0 or self.display_a <= 0:
            # A negative slope would say: the more alike, the less it knows.
            raise BadArgument("a calibration's slopes must be positive")
        if not 0.0 < self.ceiling <= 1.0:
            raise BadArgument(f"a calibration's ceiling must lie in (0, 1], got {self.ceiling}")
        if isinstance(self.reach, bool) or not isinstance(self.reach, int) or self.reach < 0:
            raise BadArgument("a calibration's reach must be a whole number, 0 or more")
        if self.spread < 0:
            # A negative spread would say: the bigger the store, the more a cosine means.
            raise BadArgument("a calibration's spread must not be negative")
        if self.found_weight < 0:
            # A negative weight would say: the more of the question found, the less it knows.
            raise BadArgument("a calibration's weight of the words found must not be negative")
        if self.word_decay < 0:
            # A negative decay would say: the more of the question the first hit holds, the
            # more often the top 3 misses.
            raise BadArgument("a calibration's word decay must not be negative")

    @property
    def is_default(self) -> bool:
        return self.source.startswith("default")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        """A stored fit, or a :class:`BadArgument` saying what is wrong with it."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BadArgument(f"the stored calibration is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise BadArgument("the stored calibration is not a JSON object")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise BadArgument(f"the stored calibration has an unknown field {unknown[0]!r}")
        try:
            return cls(**data)
        except TypeError as exc:
            raise BadArgument(f"the stored calibration is incomplete ({exc})") from None


#: hit@3's depth: the reach new fits are made with (:func:`ceiling_at`).
REACH = 3
#: The words found when nothing is known of them (:func:`found_share` of a question with no
#: distinctive word; an older daemon's reply): no evidence either way.
NO_EVIDENCE = 0.5


#: The fit a store has until `chitta calibrate` stores its own: what `chitta bench abstain
#: --data locomo10.json --data longmemeval_s_dev60.json` fits on both sets' tuning halves
#: (1,797 questions: 880 of their own, 917 of the others' in that half that they cannot
#: answer; 180 of them asked of small stores of one to five memories). The spread is fitted on
#: answerable against unanswerable, the ceiling (of reach 3), its word decay and the weight of
#: the words found by likelihood; the threshold is where the share of answerable questions put
#: in UNKNOWN meets the share of unanswerable ones put in KNOWN, on the band's signal
#: (docs/benchmarks.md, "Calibration that generalizes", "The words found beside the cosine"
#: and "A ceiling the words lift"; hybrid fused by rsf, at commit c271018 and this fit's).
DEFAULT = Calibration(a=30.918, b=-11.683, threshold=0.0969, display_a=1.0111, display_b=0.0096,
                      source="default", pairs=1797, model="all-MiniLM-L6-v2-int8", spread=0.0671,
                      ceiling=0.15, reach=REACH, found_weight=10.472,
                      word_decay=0.35)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Confidence:
    """One recall's answer to "does this store know anything about this?"."""

    raw: float  # the maximum relevance (cosine, -1..1)
    calibrated: float  # Platt: the chance the top 3 holds what is asked for
    shown: float  # the displayed chance after the refit, 0..1
    band: str  # KNOWN or UNKNOWN, on :attr:`band_value`
    source: str  # which fit: "default" or where the store's own came from
    found: float = NO_EVIDENCE  # how much of the question's distinctive words were found
    held: int = 0  # how many of them the first hit holds
    signal: float | None = None  # what the band's threshold splits (None: ``calibrated``)

    @property
    def band_value(self) -> float:
        """What the band's threshold splits: ``signal``, or ``calibrated`` when not known."""
        return self.calibrated if self.signal is None else self.signal

    @property
    def percent(self) -> int:
        return round(100 * self.shown)

    def words(self) -> str:
        """The band said to the model in words (the hook and the MCP result use this)."""
        if self.band == KNOWN:
            text = (
                f"KNOWN ({self.percent}%): this store has memories on this; "
                "verify them before relying on them."
            )
        else:
            text = (
                f"UNKNOWN ({self.percent}%): this store probably knows nothing about this; "
                "say so rather than answer from the rows shown."
            )
        if self.source.startswith("default"):
            text += " (default calibration: run `chitta calibrate` to fit this store)"
        return text

    def as_dict(self) -> dict[str, object]:
        return {
            "band": self.band,
            "percent": self.percent,
            "calibrated": round(self.calibrated, 4),
            "raw": round(self.raw, 4),
            "found": round(self.found, 4),
            "held": self.held,
            "calibration": self.source,
            "words": self.words(),
        }


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def size_term(size: int) -> float:
    """``√(2 ln N)``: how the expected best of ``N`` unrelated cosines grows, in units of
    their spread (0 for a store of one memory, or none)."""
    return math.sqrt(2 * math.log(size)) if size > 1 else 0.0


def adjusted(raw: float, size: int, spread: float) -> float:
    """The maximum relevance less what a realm of ``size`` memories alone lends it."""
    return raw - spread * size_term(size)


def ceiling_at(
    ceiling: float, size: int, reach: int, held: int = 0, word_decay: float = 0.0
) -> float:
    """The ceiling in a realm of ``size`` memories for a question ``held`` of whose
    distinctive words the first hit holds. The top ``reach`` misses the gold at most
    ``1 − ceiling`` of the time in a big store when the first hit holds none of them; it
    cannot miss in a realm of ``reach`` memories or fewer (it holds them all), and in between
    the miss is scaled by the share of the realm past the top ``reach``; each word held
    scales it by ``e^(−word_decay)``. ``reach`` 0: ``ceiling`` at every size."""
    share = 1.0 if reach <= 0 else max(0.0, 1.0 - reach / max(size, 1))
    return _capped(ceiling, share * math.exp(-word_decay * held))


def _capped(ceiling: float, share: float | np.ndarray) -> float | np.ndarray:
    """The ceiling of a realm whose share of the ceiling's miss is ``share`` (0..1)."""
    return 1.0 - (1.0 - ceiling) * share


def _reaches(
    sizes: Sequence[int], reach: int, held: Sequence[int] | None = None, word_decay: float = 0.0
) -> np.ndarray:
    """Each value's share of the ceiling's miss (:func:`ceiling_at`): 1 with ``reach`` 0 and
    no words held."""
    n = np.maximum(np.asarray(sizes, dtype=float), 1.0)
    shares = np.ones_like(n) if reach <= 0 else np.maximum(0.0, 1.0 - reach / n)
    if held is None or word_decay == 0:
        return shares
    return shares * np.exp(-word_decay * np.asarray(held, dtype=float))


def confidence(
    raw: float, fit: Calibration, size: int = 1, found: float = NO_EVIDENCE, held: int = 0
) -> Confidence:
    """The calibrated value, band and displayed chance of a raw maximum relevance in a realm
    of ``size`` live memories (it does not matter to a fit of spread 0 and reach 0) whose
    first hits hold ``found`` of the question's distinctive words (:func:`found_share`; 0.5,
    no evidence either way, when not known; it does not matter to a fit of ``found_weight``
    0), ``held`` of them the first hit (:func:`words_held`; it does not matter to a fit of
    ``word_decay`` 0)."""
    chance = sigmoid(fit.a * adjusted(raw, size, fit.spread) + fit.found_weight * found + fit.b)
    p = ceiling_at(fit.ceiling, size, fit.reach, held, fit.word_decay) * chance
    signal = ceiling_at(fit.ceiling, size, fit.reach) * chance  # the words held do not count
    shown = sigmoid(fit.display_a * logit(p) + fit.display_b)
    band = KNOWN if signal >= fit.threshold else UNKNOWN
    return Confidence(raw=raw, calibrated=p, shown=shown, band=band, source=fit.source,
                      found=found, held=held, signal=signal)  # fmt: skip


#: The hits whose words :func:`found_share` reads: the top 3, as the fit's outcome (hit@3).
FOUND_DEPTH = 3


def found_share(distinctive: Sequence[str], held: Sequence[Collection[str]]) -> float:
    """How much of the question the first hits hold: ``(m + 1) / (n + 2)`` for a question of
    ``n`` distinctive words of which one of the first :data:`FOUND_DEPTH` hits holds ``m``
    at most (``held``: each hit's words, best hit first). Laplace's rule of succession (the
    chance the next of the question's words is held, after ``m`` of ``n`` were): all three of
    three found read 0.8, the one word of a one-word question 0.67 — one word found is
    weaker evidence than three — and a question with no distinctive word 0.5, no evidence
    either way."""
    wanted = set(distinctive)
    most = max((len(wanted & set(words)) for words in held[:FOUND_DEPTH]), default=0)
    return (most + 1) / (len(wanted) + 2)


def words_held(distinctive: Sequence[str], held: Sequence[Collection[str]]) -> int:
    """How many of the question's ``distinctive`` words the first hit holds (``held``: each
    hit's words, best hit first; 0 when nothing was ranked): what lifts the ceiling
    (:func:`ceiling_at`)."""
    return len(set(distinctive) & set(held[0])) if held else 0


def max_relevance(query: np.ndarray, vectors: Sequence[np.ndarray]) -> float:
    """The highest cosine between the (unit) query vector and the (unit) memory vectors;
    -1 when there are none (nothing ranked: the store knows nothing)."""
    if not vectors:
        return -1.0
    return float(np.clip(np.max(np.stack(vectors) @ query), -1.0, 1.0))


# --- fitting and measuring ---------------------------------------------------------------------


def fit_logistic(x: Sequence[float], y: Sequence[float], *, iters: int = 50) -> tuple[float, float]:
    """``(a, b)`` maximising the likelihood of ``y ~ sigmoid(a·x + b)`` by Newton's method,
    with Platt's (1999) targets: a positive counts as ``(N₊ + 1) / (N₊ + 2)`` and a negative
    as ``1 / (N₋ + 2)``, so that a small, perfectly separable set gives a finite slope
    instead of a step."""
    w = _fit_weights([x], y, iters=iters)
    return float(w[0]), float(w[1])


def _fit_weights(columns: Sequence[Sequence[float]], y: Sequence[float], *, iters: int = 50):
    """The logistic weights of ``columns`` (then the intercept), as :func:`fit_logistic`."""
    xs = np.asarray(columns, dtype=float).reshape(len(columns), -1)
    outcomes = np.asarray(y, dtype=float)
    if xs.shape[1] != len(outcomes):
        raise BadArgument("a fit needs as many outcomes as values")
    if len(outcomes) < MIN_PAIRS:
        raise BadArgument(f"a fit needs at least {MIN_PAIRS} pairs, got {len(outcomes)}")
    if outcomes.min() == outcomes.max():
        raise BadArgument("a fit needs both outcomes: some hits in the top 3 and some misses")
    positives = outcomes.sum()
    negatives = len(outcomes) - positives
    ys = np.where(outcomes > 0.5, (positives + 1) / (positives + 2), 1 / (negatives + 2))
    design = np.concatenate([xs.T, np.ones((len(ys), 1))], axis=1)
    w = np.zeros(design.shape[1])
    ridge = 1e-6 * np.eye(design.shape[1])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -35, 35)))
        grad = design.T @ (p - ys) + 1e-6 * w
        hess = (design * (p * (1 - p))[:, None]).T @ design + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


#: The ceilings tried (:func:`fit_capped`): 0.05, 0.06, …, 1.00. Below 0.30 only a fit whose
#: ceiling the words held lift (:data:`WORD_DECAYS`) has come out: the ceiling of a question
#: whose first hit holds none of its words.
CEILINGS = tuple(round(0.05 + 0.01 * i, 2) for i in range(96))
#: The word decays tried (:func:`fit_calibration`): 0, 0.05, …, 0.60.
WORD_DECAYS = tuple(round(0.05 * i, 2) for i in range(13))


def fit_capped(
    columns: Sequence[Sequence[float]],
    y: Sequence[bool],
    *,
    iters: int = 40,
    miss: Sequence[float] | None = None,
) -> tuple[np.ndarray, float]:
    """The weights of ``columns`` then the intercept, and the ceiling ``c``, maximising the
    likelihood of ``y ~ c_i·sigmoid(w·columns + b)``, where ``c_i = 1 − (1 − c)·miss_i``
    (``miss``: each value's share of the ceiling's miss, :func:`_reaches`; all 1 when not
    given, a plain ceiling ``c``):
    for each ceiling of :data:`CEILINGS`, the weights by Fisher scoring from the plain
    logistic's, and the ceiling of the highest likelihood (1 when the data show no plateau).
    A ceiling whose first weight comes out backwards is not taken."""
    xs = np.asarray(columns, dtype=float).reshape(len(columns), -1)
    ys = np.asarray(y, dtype=float)
    shares = np.ones(xs.shape[1]) if miss is None else np.asarray(miss, dtype=float)
    design = np.concatenate([xs.T, np.ones((xs.shape[1], 1))], axis=1)
    start = _fit_weights(xs, ys)
    best: tuple[float, np.ndarray, float] = (-math.inf, start, 1.0)
    if start[0] <= 0:  # backwards already: no ceiling turns it round (the caller refuses it)
        return best[1], best[2]
    ridge = 1e-6 * np.eye(design.shape[1])
    for top in CEILINGS:
        c = _capped(top, shares)
        w = start.copy()
        for _ in range(iters):
            sig = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -35, 35)))
            p = np.clip(c * sig, 1e-12, 1 - 1e-12)
            # d log-likelihood / dz and the Fisher information of z, for p = c·sigmoid(z).
            grad_z = ys * (1 - sig) - (1 - ys) * c * sig * (1 - sig) / (1 - p)
            info = c * sig * (1 - sig) ** 2 / (1 - p)
            hess = (design * info[:, None]).T @ design + ridge
            step = np.linalg.solve(hess, design.T @ grad_z)
            w += step
            if np.abs(step).max() < 1e-9:
                break
        loglik = _log_likelihood(c, design @ w, ys)
        if w[0] > 0 and loglik > best[0]:
            best = (loglik, w.copy(), top)
    return best[1], best[2]


def _log_likelihood(ceiling: float | np.ndarray, z: np.ndarray, y: np.ndarray) -> float:
    """The log-likelihood of the outcomes ``y`` under ``p = ceiling·sigmoid(z)``."""
    p = np.clip(ceiling / (1.0 + np.exp(-np.clip(z, -35, 35))), 1e-12, 1 - 1e-12)
    return float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))


#: Sizes whose √(2 ln N) spans less than this cannot tell the size's part from the intercept.
MIN_SIZE_SPAN = 1.0


def fit_spread(raw: Sequence[float], sizes: Sequence[int], hit3: Sequence[bool]) -> float | None:
    """The spread of :func:`adjusted` that a logistic of ``hit3`` (or of any outcome, such as
    "answerable") over the cosine and ``√(2 ln N)`` finds: minus its size weight over its
    cosine weight, 0 when size comes out helping; None when the sizes are too alike to tell
    (:data:`MIN_SIZE_SPAN`)."""
    terms = [size_term(n) for n in sizes]
    if not terms or max(terms) - min(terms) < MIN_SIZE_SPAN:
        return None
    a, d, _ = _fit_weights([raw, terms], [float(h) for h in hit3])
    if a <= 0:
        raise BadArgument("the fit came out backwards: higher relevance found fewer gold memories")
    return max(0.0, float(-d / a))


def fit_calibration(
    raw: Sequence[float],
    hit3: Sequence[bool],
    *,
    source: str,
    fitted_at: str | None = None,
    threshold: float | None = None,
    unanswerable: Sequence[bool] | None = None,
    model: str | None = None,
    sizes: Sequence[int] | None = None,
    ceiling: bool = True,
    found: Sequence[float] | None = None,
    held: Sequence[int] | None = None,
) -> Calibration:
    """A Platt fit (with a ceiling unless ``ceiling`` is False: :func:`fit_capped`, of reach
    :data:`REACH` when the sizes are known) of ``hit3`` (the top 3 held a gold memory) against
    the maximum relevance ``raw`` in realms of ``sizes`` memories, with the display refit over
    the calibrated logit
    (:func:`cross_fitted_display`). The spread is fitted when the sizes differ enough
    (:func:`fit_spread`: on answerable against unanswerable when ``unanswerable`` marks
    both), else the default's is kept; without ``sizes`` it is 0 (the raw
    cosine alone). The band threshold is ``threshold`` if given; else, when ``unanswerable``
    marks some questions the store cannot answer, where the two error shares meet
    (:func:`equal_error_threshold`); else the default's. ``model`` names the embedding model
    whose cosines ``raw`` holds. ``found``: how much of each question's distinctive words its
    first hits held (:func:`found_share`), fitted with its own weight when given and when
    both weights come out positive (else the fit is of the cosine alone). ``held``: how many
    of them each question's first hit held (:func:`words_held`); when given, the ceiling's
    word decay is chosen with it by likelihood (:data:`WORD_DECAYS`), else it is 0."""
    reach = REACH if ceiling and sizes is not None else 0
    if sizes is None:
        sizes, spread = [1] * len(raw), 0.0
    else:
        if len(sizes) != len(raw):
            raise BadArgument("a fit needs a realm size for every value")
        # The spread is what keeps the band's split the same in stores of every size, so it
        # is fitted on answerable against unanswerable when those are known (else on hit@3).
        known = unanswerable is not None and any(unanswerable) and not all(unanswerable)
        target = [not u for u in unanswerable] if known and unanswerable else hit3
        fitted = fit_spread(raw, sizes, target)
        spread = DEFAULT.spread if fitted is None else fitted
    x = [adjusted(r, n, spread) for r, n in zip(raw, sizes, strict=True)]
    if found is not None and len(found) != len(raw):
        raise BadArgument("a fit needs the words found for every value")
    if held is not None and len(held) != len(raw):
        raise BadArgument("a fit needs the words held for every value")
    decays = WORD_DECAYS if reach and held is not None else (0.0,)
    columns = [x] if found is None else [x, list(found)]
    w, top, decay = _fit_decayed(columns, hit3, ceiling, sizes, reach, held, decays)
    if len(w) == 3 and min(w[0], w[1]) <= 0:
        # The words found said nothing the cosine did not, or took its place (a small set
        # they separate alone): the cosine is the witness every fit keeps.
        columns = [x]
        w, top, decay = _fit_decayed(columns, hit3, ceiling, sizes, reach, held, decays)
    miss = _reaches(sizes, reach, held, decay)
    a, b, weight = float(w[0]), float(w[-1]), float(w[1]) if len(w) == 3 else 0.0
    if a <= 0:
        raise BadArgument("the fit came out backwards: higher relevance found fewer gold memories")
    fit = Calibration(
        a=a,
        b=b,
        found_weight=weight,
        threshold=DEFAULT.threshold if threshold is None else threshold,
        source=source,
        pairs=len(raw),
        fitted_at=fitted_at,
        model=model,
        spread=spread,
        ceiling=top,
        reach=reach,
        word_decay=decay,
    )
    z = np.asarray(columns, dtype=float).T @ w[:-1] + b
    # The band's signal: the value before the words held lift the ceiling (see the module).
    signals = [_capped(top, m) * sigmoid(float(v))
               for v, m in zip(z, _reaches(sizes, reach), strict=True)]  # fmt: skip
    display = cross_fitted_display(x, hit3, ceiling=ceiling, miss=miss,
                                   found=columns[1] if len(columns) == 2 else None)  # fmt: skip
    if display is not None:
        fit = replace(fit, display_a=display[0], display_b=display[1])
    mixed = unanswerable is not None and any(unanswerable) and not all(unanswerable)
    if threshold is None and mixed:
        fit = replace(fit, threshold=equal_error_threshold(signals, unanswerable))
    return fit


def _fit_decayed(
    columns: Sequence[Sequence[float]],
    hit3: Sequence[bool],
    ceiling: bool,
    sizes: Sequence[int],
    reach: int,
    held: Sequence[int] | None,
    decays: Sequence[float],
) -> tuple[np.ndarray, float, float]:
    """The weights, ceiling and word decay (one of ``decays``) of the highest likelihood."""
    best: tuple[float, np.ndarray, float, float] | None = None
    y = np.asarray(hit3, dtype=float)
    for decay in decays:
        miss = _reaches(sizes, reach, held, decay)
        w, top = _fit_columns(columns, hit3, ceiling, miss)
        z = np.asarray(columns, dtype=float).T @ w[:-1] + w[-1]
        loglik = _log_likelihood(_capped(top, miss), z, y)
        if best is None or (w[0] > 0 and loglik > best[0]):
            best = (loglik, w, top, decay)
    assert best is not None  # decays is never empty
    return best[1], best[2], best[3]


def _fit_columns(
    columns: Sequence[Sequence[float]], hit3: Sequence[bool], ceiling: bool, miss: np.ndarray
) -> tuple[np.ndarray, float]:
    """The weights (then the intercept) and ceiling of a fit of ``hit3`` on ``columns``: with
    a ceiling (:func:`fit_capped`) or without (the plain logistic, ceiling 1)."""
    if ceiling:
        return fit_capped(columns, hit3, miss=miss)
    return _fit_weights(columns, [float(h) for h in hit3]), 1.0


#: Folds of the display refit's cross-fit.
DISPLAY_FOLDS = 5


def cross_fitted_display(
    raw: Sequence[float],
    hit3: Sequence[bool],
    *,
    ceiling: bool = False,
    miss: Sequence[float] | None = None,
    found: Sequence[float] | None = None,
) -> tuple[float, float] | None:
    """The display refit, learnt from how a Platt fit does on data it was not fitted on
    (``raw``: the values the fit is made on, size-adjusted; ``miss`` as :func:`fit_capped`
    takes it; ``found``, when given, fitted beside them as :func:`fit_calibration` does).

    Refitted on the very values it was fitted on, a Platt fit's logit maps onto itself (the
    refit is the identity). So each fold's values are calibrated by a fit of the other folds
    (:data:`DISPLAY_FOLDS`, every k-th value), and the refit is made over the logits of those
    out-of-fold values: it learns how over- or under-confident the fit is on new questions.
    None when a fold cannot be fitted or the refit comes out backwards."""
    folds = DISPLAY_FOLDS
    shares = np.ones(len(raw)) if miss is None else np.asarray(miss, dtype=float)
    columns = np.asarray([raw] if found is None else [raw, found], dtype=float)
    out_of_fold: list[float] = [0.0] * len(raw)
    try:
        for k in range(folds):
            train = [i for i in range(len(raw)) if i % folds != k]
            w, c = _fit_columns(columns[:, train], [hit3[i] for i in train], ceiling,
                                shares[train])  # fmt: skip
            for i in range(k, len(raw), folds):
                z = float(columns[:, i] @ w[:-1] + w[-1])
                out_of_fold[i] = _capped(c, float(shares[i])) * sigmoid(z)
        da, db = fit_logistic([logit(p) for p in out_of_fold], [float(h) for h in hit3])
    except BadArgument:
        return None
    return (da, db) if da > 0 else None


def refit_display(
    fit: Calibration,
    raw: Sequence[float],
    hit3: Sequence[bool],
    *,
    source: str,
    fitted_at: str | None = None,
    sizes: Sequence[int] | None = None,
    found: Sequence[float] | None = None,
    held: Sequence[int] | None = None,
) -> Calibration:
    """``fit`` with only its displayed percentage refitted to these observations (in realms
    of ``sizes`` memories, None: one each; with the shares ``found`` of their words, None:
    all; ``held`` by the first hit, None: none): the band (a, b, spread, threshold, the
    words' weight, the ceiling) is kept, as the seed keeps it on the broadly fitted raw
    value."""
    counts = [1] * len(raw) if sizes is None else sizes
    shares = [1.0] * len(raw) if found is None else found
    firsts = [0] * len(raw) if held is None else held
    calibrated = [confidence(r, fit, n, f, h).calibrated
                  for r, n, f, h in zip(raw, counts, shares, firsts, strict=True)]  # fmt: skip
    da, db = fit_logistic([logit(p) for p in calibrated], [float(h) for h in hit3])
    if da <= 0:
        raise BadArgument("the refit came out backwards: higher confidence found fewer gold")
    return replace(fit, display_a=da, display_b=db, source=source, pairs=len(raw),
                   fitted_at=fitted_at)  # fmt: skip


def equal_error_threshold(calibrated: Sequence[float], unanswerable: Sequence[bool]) -> float:
    """The calibrated value where the share of answerable questions below it (put in UNKNOWN)
    is closest to the share of unanswerable ones at or above it (put in KNOWN)."""
    values = np.asarray(calibrated, dtype=float)
    flags = np.asarray(unanswerable, dtype=bool)
    answerable, others = np.sort(values[~flags]), np.sort(values[flags])
    best, best_gap = 0.5, math.inf
    for t in np.unique(np.round(values, 4)):
        miss = np.searchsorted(answerable, t, "left") / len(answerable)
        leak = 1 - np.searchsorted(others, t, "left") / len(others)
        if 0 < t < 1 and abs(miss - leak) < best_gap:
            best, best_gap = float(t), abs(miss - leak)
    return min(max(best, 0.01), 0.99)


def ece(predicted: Sequence[float], outcome: Sequence[bool], bins: int = ECE_BINS) -> float:
    """Expected calibration error: the mean gap between predicted chance and observed rate
    over equal-width bins, weighted by how many predictions fall in each."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(outcome, dtype=float)
    if not len(p):
        return 0.0
    index = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        mask = index == b
        if mask.any():
            total += mask.mean() * abs(p[mask].mean() - y[mask].mean())
    return float(total)


def reliability(
    predicted: Sequence[float], outcome: Sequence[bool], bins: int = ECE_BINS
) -> list[dict[str, float]]:
    """The reliability diagram behind :func:`ece`: for each equal-width bin that holds a
    prediction, its range, how many fell in it, their mean predicted chance and the observed
    rate (Niculescu-Mizil & Caruana 2005, "Predicting good probabilities")."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(outcome, dtype=float)
    index = np.minimum((p * bins).astype(int), bins - 1) if len(p) else p.astype(int)
    out = []
    for b in range(bins):
        mask = index == b
        if mask.any():
            out.append({"low": b / bins, "high": (b + 1) / bins, "count": int(mask.sum()),
                        "predicted": round(float(p[mask].mean()), 4),
                        "observed": round(float(y[mask].mean()), 4)})  # fmt: skip
    return out


def loo_refit(calibrated: Sequence[float], outcome: Sequence[bool]) -> list[float]:
    """Each value's displayed chance under a refit over ``logit(p)`` made without it
    (leave-one-out), so the refit's calibration error is not measured on its own data."""
    z = [logit(p) for p in calibrated]
    y = [float(o) for o in outcome]
    out = []
    for i in range(len(z)):
        a, b = fit_logistic(z[:i] + z[i + 1 :], y[:i] + y[i + 1 :], iters=25)
        out.append(sigmoid(a * z[i] + b))
    return out


def auroc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """The chance a random positive scores above a random negative (ties count half)."""
    if not positive or not negative:
        raise BadArgument("AUROC needs both positives and negatives")
    values = np.concatenate([np.asarray(positive, float), np.asarray(negative, float)])
    ordered = np.sort(values)
    ranks = (
        np.searchsorted(ordered, values, "left") + np.searchsorted(ordered, values, "right") + 1
    ) / 2
    n_pos = len(positive)
    u = ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * len(negative)))

"""Admission: which recalled rows are shown to the model, given how much the store knows.

Seed 000 (Recall pipeline, "UNKNOWN silence", "Small-realm relaxation"). Retrieving a memory
is not the same as showing it: the fused ranking always has a first row, on-topic or not, so
an absolute signal — the calibrated maximum relevance and its band
(recall/confidence/calibration.py) — decides how much of each lane to trust. The rules,
applied per row by :func:`admit`:

- The keyed correction lookup (``corr``) is always admitted: it is a lookup, not a guess.
- A terse negation ("no", "nope, stop") or a turn with no distinctive token recalls nothing
  by topic: every other lane's row is dropped.
- Under KNOWN every row is admitted. Under UNKNOWN (unless ``CHITTA_UNKNOWN_SILENCE=0``):
  ``sem`` and ``ctx`` rows are dropped as noise, and so is any lane not named here (the fuzzy
  correction lane of the seed, which chitta does not have, would be one); ``hyb``, ``kw`` and
  ``xr`` rows survive only if they share a distinctive token with the turn; a ``kw`` row from
  a turn with fewer than two distinctive tokens also needs a normalised BM25 of at least
  ``CHITTA_KW_SINGLE_TOKEN_MIN`` (:func:`normalised_bm25`).
- Small-realm relaxation: in a realm other than the default one, when the hybrid page came
  back short (fewer rows than asked: the realm is small) and its top hit is confident, the
  token-share rule is extended to ``sem`` and ``ctx`` instead of dropping them.

A word is *distinctive* when it is not a stop word and no more than ``fraction`` (the recall's
``common_fraction``, 0.1) of the realm's memories contain it; in a realm of fewer than 20
memories every word that is not a stop word is. Pure and free of numpy: the hooks import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chitta.store import bm25
from chitta.store.terms import STOP_WORDS

#: The lanes of seed 000's rules (the hook's lane names; the MCP gateway reads a recall's
#: strategy as one of them).
TOKEN_SHARE_LANES = frozenset({"hyb", "kw", "xr"})
SILENCED_LANES = frozenset({"sem", "ctx"})
KEYED_LANE = "corr"
#: CHITTA_KW_SINGLE_TOKEN_MIN's default (seed 000).
KW_SINGLE_TOKEN_MIN = 60.0
#: A realm needs this many memories before a word can be too common to be distinctive.
MIN_REALM_SIZE = 20
#: The raw maximum relevance (cosine) a small realm's top hit needs for the relaxation.
RELAX_MIN_RAW = 0.4

_WORD = re.compile(r"\w+", re.UNICODE)
#: Words a terse negation is made of, besides stop words.
_NEGATIONS = frozenset(
    [
        "no",
        "nope",
        "nah",
        "nay",
        "never",
        "stop",
        "cancel",
        "wrong",
        "dont",
        "don't",
        "not",
        "nevermind",
        "incorrect",
        "false",
    ]
)
_SOFTENERS = frozenset(["thanks", "thank", "please", "that's", "thats", "okay", "ok", "just"])
#: A turn of more words than this is not terse.
TERSE_MAX_WORDS = 4


@dataclass(frozen=True, slots=True)
class GateSettings:
    """The admission switches (read by config.gate_settings from the environment)."""

    silence: bool = True  # CHITTA_UNKNOWN_SILENCE (1): apply the UNKNOWN rules
    kw_single_token_min: float = KW_SINGLE_TOKEN_MIN  # CHITTA_KW_SINGLE_TOKEN_MIN, 0-100
    relax_min_raw: float = RELAX_MIN_RAW


@dataclass(frozen=True, slots=True)
class Turn:
    """What the gate needs of the turn (the query): its distinctive words, and whether it is a
    terse negation."""

    distinctive: tuple[str, ...]
    terse_negation: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    """A row's admission: admitted with its reason, or dropped with the cause."""

    admitted: bool
    reason: str


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def is_terse_negation(text: str) -> bool:
    """A short turn that only refuses or stops ("no", "nope, stop", "no thanks")."""
    tokens = [w.replace("’", "'") for w in text.lower().split()]
    tokens = [t.strip('.,!?;:"()') for t in tokens]
    tokens = [t for t in tokens if t]
    if not tokens or len(tokens) > TERSE_MAX_WORDS:
        return False
    if not any(t in _NEGATIONS for t in tokens):
        return False
    return all(t in _NEGATIONS or t in _SOFTENERS or t in STOP_WORDS for t in tokens)


def distinctive_tokens(
    text: str, df: Callable[[str], int], realm_size: int, fraction: float
) -> tuple[str, ...]:
    """The words of ``text`` that are neither stop words nor common in the realm, in order."""
    out = []
    for word in dict.fromkeys(words(text)):
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        if realm_size < MIN_REALM_SIZE or df(word) <= fraction * realm_size:
            out.append(word)
    return tuple(out)


def read_turn(text: str, df: Callable[[str], int], realm_size: int, fraction: float | None) -> Turn:
    """The gate's view of a turn (``fraction`` None: only stop words are not distinctive)."""
    limit = 1.0 if fraction is None else fraction
    return Turn(distinctive_tokens(text, df, realm_size, limit), is_terse_negation(text))


def bm25_ceiling(terms: Iterable[str], df: Callable[[str], int], total: int) -> float:
    """The most BM25 the terms can add up to in a collection of ``total`` memories (the
    realm's): each term's idf times (k1 + 1), the limit of its saturating term-frequency part
    (idf as FTS5 computes it, at least 1e-6; store/bm25.py)."""
    return sum(bm25.idf(min(df(term), total), total) * (bm25.K1 + 1) for term in terms)


def normalised_bm25(raw: float, ceiling: float) -> float:
    """A BM25 score on a 0–100 scale: its share of :func:`bm25_ceiling`. One query term met
    once in a row of average length reads about 45; twice, or in a short row, over 60."""
    if ceiling <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * raw / ceiling))


def relaxed(
    realm: str, default_realm: str, page: int, limit: int, raw: float, settings: GateSettings
) -> bool:
    """Whether the small-realm relaxation applies: a non-default realm, a short hybrid page
    (``page`` rows of the ``limit`` asked for) and a confident top hit."""
    return realm != default_realm and page < limit and raw >= settings.relax_min_raw


def admit(
    lane: str,
    shared: Iterable[str],
    *,
    band: str | None,
    turn: Turn | None,
    settings: GateSettings,
    relax: bool = False,
    kw_norm: float | None = None,
) -> Verdict:
    """Whether a row of ``lane`` that shares ``shared`` distinctive words with the turn is
    shown, under ``band`` (None: no band was computed, treated as KNOWN). Without ``turn``
    (a reply that does not carry one) the turn rules are skipped."""
    if lane == KEYED_LANE:
        return Verdict(True, "keyed")
    if turn is not None and turn.terse_negation:
        return Verdict(False, "terse-negation")
    if turn is not None and not turn.distinctive:
        return Verdict(False, "no-distinctive-token")
    if band != "UNKNOWN" or not settings.silence:
        return Verdict(True, lane)
    share = bool(tuple(shared))
    if lane in SILENCED_LANES and not relax:
        return Verdict(False, "unknown-silenced")
    if lane not in TOKEN_SHARE_LANES | SILENCED_LANES:
        return Verdict(False, "unknown-silenced")
    if not share:
        return Verdict(False, "no-shared-token")
    weak = kw_norm is None or kw_norm < settings.kw_single_token_min
    single = turn is None or len(turn.distinctive) < 2
    if lane == "kw" and single and weak:
        return Verdict(False, "weak-single-token")
    return Verdict(True, "small-realm" if lane in SILENCED_LANES else "shares-token")


@dataclass(frozen=True, slots=True)
class GateView:
    """What the gate knows of this prompt: the band, the turn, the relaxation."""

    settings: GateSettings
    turn: Turn | None  # None: no reply carried one (the turn rules are skipped)
    band: str | None = None  # None: no reply carried one (every call failed)
    calibrated: float | None = None
    words: str | None = None
    relax: bool = False

    def verdict(self, lane: str, row: Mapping[str, Any]) -> Verdict:
        return admit(
            lane,
            row.get("shared", ()),
            band=self.band,
            turn=self.turn,
            settings=self.settings,
            relax=self.relax,
            kw_norm=row.get("kw_norm"),
        )

    def debug_line(self, lane: str, row: Mapping[str, Any], verdict: Verdict) -> str:
        """One ``CHITTA_ADMIT_DEBUG`` line: ids, lanes and numbers only, never text."""
        conf = "-" if self.calibrated is None else f"{self.calibrated:.3f}"
        state = "admitted" if verdict.admitted else "dropped"
        return (
            f"chitta admit: lane={lane} id={row.get('id')} confidence={conf} "
            f"band={self.band or '-'} relaxed={'yes' if self.relax else 'no'} "
            f"{state} {verdict.reason}"
        )


#: The hook lane a recall strategy's rows are judged as (the MCP gateway; seed 000).
STRATEGY_LANES = {"semantic": "sem", "keyword": "kw"}


def read_reply_turn(reply: Mapping[str, Any]) -> Turn | None:
    """The turn a recall reply carries, or None when it has none (an older daemon)."""
    data = reply.get("turn")
    if not isinstance(data, Mapping) or not isinstance(data.get("distinctive"), list):
        return None
    return Turn(tuple(str(w) for w in data["distinctive"]), bool(data.get("terse_negation")))


def read_reply_band(reply: Mapping[str, Any]) -> tuple[str | None, float | None, float | None]:
    """(band, calibrated, raw) of a recall reply; Nones for what it does not carry."""
    conf = reply.get("confidence")
    if not isinstance(conf, Mapping) or conf.get("band") not in ("KNOWN", "UNKNOWN"):
        return None, None, None
    calibrated, raw = conf.get("calibrated"), conf.get("raw")
    number = (int, float)
    return (conf["band"], calibrated if isinstance(calibrated, number) else None,
            raw if isinstance(raw, number) else None)  # fmt: skip


def row_lane(row_realm: object, realm: str, strategy: str) -> str:
    """The lane a recall's row is judged as: ``xr`` from another realm, else by strategy."""
    return "xr" if row_realm != realm else STRATEGY_LANES.get(strategy, "hyb")


def gate_reply(
    reply: dict[str, Any],
    *,
    realm: str,
    default_realm: str,
    limit: int,
    strategy: str,
    settings: GateSettings,
    rows: str = "hits",
) -> dict[str, Any]:
    """A recall reply (its JSON shape) with only the rows the gate admits, each with its
    ``admitted`` reason, and a ``gate`` block: band, relaxation, drops by cause. Rows from
    another realm are judged as ``xr``; the others by the strategy (hybrid: ``hyb``).
    ``rows`` names the list judged: ``hits`` (recall) or ``items`` (reconstruct, whose
    recall page also counts the items the budget left out)."""
    if not reply.get("ok") or not isinstance(reply.get(rows), list):
        return reply
    band, calibrated, raw = read_reply_band(reply)
    # The page the count returned: a time cue's seats (seed 002 §2.4) do not make it longer.
    page = sum(1 for row in reply[rows] if not _seated(row)) + len(reply.get("omitted") or [])
    relax = raw is not None and relaxed(realm, default_realm, page, limit, raw,
                                        settings)  # fmt: skip
    view = GateView(settings, read_reply_turn(reply), band, calibrated, relax=relax)
    kept, dropped = [], {}
    for row in reply[rows]:
        verdict = view.verdict(row_lane(row.get("realm"), realm, strategy), row)
        if verdict.admitted:
            kept.append({**row, "admitted": verdict.reason})
        else:
            dropped[verdict.reason] = dropped.get(verdict.reason, 0) + 1
    gate = {"band": view.band, "relaxed": relax, "silence": settings.silence, "dropped": dropped}
    return {**reply, rows: kept, "gate": gate}


def _seated(hit: Mapping[str, Any]) -> bool:
    """Whether a reply's row holds a time cue's seat (``match_reason.admission``)."""
    reason = hit.get("match_reason")
    return isinstance(reason, Mapping) and reason.get("admission") == "reservation"

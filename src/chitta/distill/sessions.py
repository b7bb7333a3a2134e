"""Model distillation of finished sessions (issue 22 part 2; docs/distill.md#model-distillation):
which sessions wait, and one bounded step of the daemon's background worker.

**What waits.** When a model is configured, every agent session's turn the store keeps marks
its session as waiting: a row in the store's meta, ``distill:session:["<realm>", "<session>"]``
→ ``{"newest": id of its newest turn, "last_ms": when, "upto": id of the newest turn already
distilled, "attempts": replies that could not be read}``. The row lives in the store, so a
daemon that stops mid-batch loses nothing: the next one finds the row as it was and sends the
same turns again (a memory stored twice meets the quality gate, which reinforces the first).

**When.** A session is finished ``idle_s`` after its last turn. One step sends one batch of
one finished session — its turns after ``upto``, in order, up to ``max_chars`` of prompt —
to the model chain (cited recall's: tried in order) through a circuit breaker (3 failures
open it for 60 s, then one probe). An endpoint that fails leaves the session waiting; a reply
that cannot be read counts an attempt, and after :data:`MAX_ATTEMPTS` the batch is passed
over (counted ``gave_up``). Nothing runs on a hook's path: hooks only store turns.

**What is stored.** Each curated memory the reply holds (distill/model.py) is stored through
the quality gate, tagged ``distilled``, its source the session with ``via``
``distiller:model/<kind>:<model>/<prompt version>`` and ``turns`` the turns it cites; its
confidence starts at the model's (within 0.05–0.95). It supersedes the verbatim fragments of
those turns (distill/turns.py) that say the same thing (cosine at least
:data:`SUPERSEDE_COSINE`): recall then shows the curated memory in their place.

**Privacy.** Nothing is sent unless a ``[[model]]`` is configured, never for a realm with
``distill = false``, and never a turn that looks like it holds a credential (it is withheld
in the prompt). What is sent is logged by count only: turns, characters, the model's name.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta.cited.synth import ModelStepError, ask_model
from chitta.distill.model import PROMPT_VERSION, Curated, build_prompt, read_reply, turn_line
from chitta.distill.settings import DistillSettings
from chitta.distill.turns import TAG as FRAGMENT_TAG
from chitta.distill.turns import is_turn
from chitta.embed.breaker import CircuitBreaker
from chitta.errors import BadArgument, CircuitOpen
from chitta.store.confidence import INITIAL_STRENGTH, Confidence, tier_for
from chitta.store.ids import new_id
from chitta.store.kinds import DECAY_RATE, Kind
from chitta.store.provenance import DISTILLER, drawn_from
from chitta.store.records import Memory, Source

if TYPE_CHECKING:
    from chitta.api import Chitta

log = logging.getLogger(__name__)

#: The daemon's writer lock, or nothing (a step run in a process of its own).
Writing = Callable[[], AbstractContextManager[object]]

#: The meta rows of sessions waiting to be distilled start with this.
PREFIX = "distill:session:"
#: The tag of every memory a model distilled.
TAG = "distilled"
#: Replies that could not be read before a batch is passed over.
MAX_ATTEMPTS = 3
#: The most turns of one session read to find those not yet distilled.
MAX_SESSION_TURNS = 2000
#: Cosine at or above which a fragment of a cited turn says what the curated memory says.
SUPERSEDE_COSINE = 0.6
#: The breaker's figures: the issue's (and the embedder's) 3 failures, 60 s.
BREAKER_FAILURES, BREAKER_COOLDOWN_S = 3, 60.0
#: A curated memory's starting confidence stays inside this (the API's is exclusive of 0, 1).
CONFIDENCE_RANGE = (0.05, 0.95)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A session with turns not yet distilled."""

    realm: str
    session: str
    newest: str
    last_ms: int
    upto: str | None
    attempts: int

    @property
    def key(self) -> str:
        return session_key(self.realm, self.session)

    def as_json(self) -> str:
        return json.dumps({"newest": self.newest, "last_ms": self.last_ms, "upto": self.upto,
                           "attempts": self.attempts})  # fmt: skip


def session_key(realm: str, session: str) -> str:
    """The meta key of a session's row."""
    return PREFIX + json.dumps([realm, session])


def note_turn(chitta: Chitta, turn: Memory) -> None:
    """Mark ``turn``'s session as waiting (called as each turn is stored)."""
    store = chitta.store
    session = turn.source.session or ""
    with store.write_lock():  # read, change, write: the worker writes the same row
        key = session_key(turn.realm, session)
        old = _parse(key, store.meta(key))
        row = Waiting(turn.realm, session, turn.id, turn.created_at,
                      old.upto if old else None, old.attempts if old else 0)  # fmt: skip
        store.set_meta(row.key, row.as_json())


def waiting(chitta: Chitta) -> list[Waiting]:
    """Every session with turns not yet distilled, the longest idle first."""
    rows = [_parse(k, v) for k, v in chitta.store.meta_items().items() if k.startswith(PREFIX)]
    pending = [r for r in rows if r is not None and (r.upto is None or r.upto < r.newest)]
    return sorted(pending, key=lambda r: r.last_ms)


def _parse(key: str, value: str | None) -> Waiting | None:
    """A row, or None for a missing or damaged one (a damaged row is started afresh)."""
    if value is None:
        return None
    try:
        realm, session = json.loads(key[len(PREFIX) :])
        data = json.loads(value)
        return Waiting(str(realm), str(session), str(data["newest"]), int(data["last_ms"]),
                       data["upto"] if isinstance(data["upto"], str) else None,
                       int(data["attempts"]))  # fmt: skip
    except (ValueError, TypeError, KeyError):
        log.warning("distill: a damaged row of the sessions waiting was started afresh")
        return None


class Distiller:
    """The worker's side: one session's batch a step, through one circuit breaker."""

    def __init__(self, settings: DistillSettings, *, env: Mapping[str, str] | None = None,
                 clock: Callable[[], float] | None = None) -> None:  # fmt: skip
        self.settings = settings
        self.env = os.environ if env is None else env
        timing = {"clock": clock} if clock is not None else {}
        self.breaker = CircuitBreaker(BREAKER_FAILURES, BREAKER_COOLDOWN_S,
                                      name="distillation model", **timing)  # fmt: skip

    def step(self, chitta: Chitta, now: int, writing: Writing = nullcontext) -> Counter[str]:
        """Distil one batch of the longest-idle finished session, if one is; the counts of
        what happened (``sessions`` 0 when nothing was due). Its writes are made under
        ``writing`` (the daemon's writer lock); the model is asked outside it."""
        counts: Counter[str] = Counter()
        if not self.settings.model_configured:
            return counts
        idle_ms = self.settings.idle_s * 1000
        for row in waiting(chitta):
            if now - row.last_ms < idle_ms:
                break  # the rest are less idle still
            if not self.settings.realm_on(row.realm):
                with writing():
                    _forget_row(chitta, row)
                counts["opted_out"] += 1
                continue
            self._distil(chitta, row, counts, writing)
            break
        return counts

    def _distil(self, chitta: Chitta, row: Waiting, counts: Counter[str],
                writing: Writing) -> None:  # fmt: skip
        turns = _turns_after(chitta, row)
        if not turns:
            with writing():
                _advance(chitta, row, row.newest, attempts=0)
            return
        batch = self._batch(turns)
        prompt = build_prompt(batch)
        counts["sessions"] += 1
        try:
            # What the endpoint might echo in an error is blanked out of the error's excerpt:
            # the breaker's last error shows in `chitta status`.
            private = [prompt, *(" ".join(t.content.split()) for t in batch)]
            text, label = self.breaker.call(self._ask, prompt, private)
        except CircuitOpen:
            counts["breaker_open"] += 1
            return
        except ModelStepError:
            counts["failed"] += 1  # the session waits; the breaker counts the failure
            return
        counts["sent_turns"] += len(batch)
        reading = read_reply(text, batch, self.settings.min_confidence)
        counts.update({f"rejected_{why}": n for why, n in reading.rejected.items()})
        if reading.rejected["malformed"]:
            attempts = row.attempts + 1
            counts["gave_up"] += attempts >= MAX_ATTEMPTS
            with writing():
                if attempts >= MAX_ATTEMPTS:  # passed over: the next batch, or the next session
                    _advance(chitta, row, batch[-1].id, attempts=0)
                else:
                    _advance(chitta, row, row.upto, attempts=attempts)
            return
        counts["abstained"] += reading.abstained
        via = f"{DISTILLER}model/{label}/{PROMPT_VERSION}"
        with writing():
            # The batch's fragments are read once, for all the memories the reply kept.
            fragments = _fragments_of(chitta, row, batch) if reading.kept else []
            for curated in reading.kept:
                stored, replaced = _store(chitta, row, curated, via, batch, fragments)
                counts["stored"] += stored
                counts["superseded"] += replaced
            _advance(chitta, row, batch[-1].id, attempts=0)

    def _batch(self, turns: list[Memory]) -> list[Memory]:
        """The first turns whose prompt stays within ``max_chars`` (one at the least)."""
        size = len(build_prompt([]))  # the fixed text; each turn adds its line
        batch: list[Memory] = []
        for number, turn in enumerate(turns, start=1):
            size += len(turn_line(number, turn)) + (1 if batch else 0)  # the line break
            if batch and size > self.settings.max_chars:
                break
            batch.append(turn)
        return batch

    def _ask(self, prompt: str, private: list[str]) -> tuple[str, str]:
        """The first answer of the model chain, with the model's label; ModelStepError
        (naming every step's failure, ``private`` texts blanked out) when none answers."""
        errors = []
        for endpoint in self.settings.models:
            label = f"{endpoint.kind}:{endpoint.model}"
            # Counts only: what is sent is the user's conversation.
            log.info("distill: sending %d characters of a session to %s", len(prompt), label)
            try:
                return ask_model(endpoint, prompt, self.env, private), label
            except ModelStepError as exc:
                errors.append(f"{label}: {exc}")
        raise ModelStepError("; ".join(errors))

    def status(self) -> dict[str, Any]:
        """The breaker's state and counts, for `chitta status`."""
        return {"models": [f"{m.kind}:{m.model}" for m in self.settings.models],
                "breaker": self.breaker.stats()}  # fmt: skip


def _turns_after(chitta: Chitta, row: Waiting) -> list[Memory]:
    """The session's turns in ``row``'s realm after ``upto``, oldest first."""
    ids = chitta.store.session_recent(row.session, MAX_SESSION_TURNS)
    found = chitta.store.get_many([i for i in ids if row.upto is None or i > row.upto])
    turns = [m for m in found.values() if m.realm == row.realm and is_turn(m)]
    return sorted(turns, key=lambda m: m.id)


def _advance(chitta: Chitta, row: Waiting, upto: str | None, *, attempts: int) -> None:
    """Record that the session is distilled up to ``upto``; a turn stored meanwhile (the
    row's ``newest`` moved on) keeps it waiting."""
    store = chitta.store
    with store.write_lock():
        now = _parse(row.key, store.meta(row.key)) or row
        store.set_meta(row.key, Waiting(row.realm, row.session, now.newest, now.last_ms, upto,
                                        attempts).as_json())  # fmt: skip


def _forget_row(chitta: Chitta, row: Waiting) -> None:
    with chitta.store.write_lock():
        chitta.store.delete_meta(row.key)


def _store(chitta: Chitta, row: Waiting, curated: Curated, via: str, batch: list[Memory],
           fragments: list[Memory]) -> tuple[int, int]:  # fmt: skip
    """Store one curated memory of ``batch``; (1 if it is new, the ``fragments`` it
    superseded)."""
    by_id = {t.id: t for t in batch}
    cited = [by_id[i] for i in curated.turns]
    first = cited[0]
    embedded = chitta.embedder.embed([curated.content])
    vector = embedded.vectors[0]
    now = chitta.clock()
    low, high = CONFIDENCE_RANGE
    tau = DECAY_RATE[curated.kind]
    memory = Memory(
        id=new_id(now), kind=curated.kind, content=curated.content, realm=row.realm,
        agent_id=first.agent_id, channel=first.channel, tags=(TAG,),
        source=Source(session=row.session, via=via, turns=curated.turns),
        created_at=now, updated_at=now,
        event_time=max((t.event_time or t.created_at) for t in cited),
        confidence=Confidence.initial(tau, min(high, max(low, curated.confidence))),
        strength=INITIAL_STRENGTH, tier=tier_for(INITIAL_STRENGTH), decayed_at=now,
        episode_id=first.episode_id, truncated=embedded.truncated[0],
    )  # fmt: skip
    done = chitta.insert_gated(memory, vector, besides=Kind.EPISODE)
    if done.deduplicated:
        return 0, 0
    return 1, _supersede_fragments(chitta, done.id, vector, set(curated.turns), fragments)


def _fragments_of(chitta: Chitta, row: Waiting, batch: list[Memory]) -> list[Memory]:
    """The live fragments cut from the turns of ``batch``: tagged ``operational`` and drawn
    from one of them (``via`` and ``turns`` since the provenance spine; older ones name
    their turn in ``ref``)."""
    turns = {t.id for t in batch}
    ids = chitta.store.session_recent(row.session, MAX_SESSION_TURNS)
    return [m for m in chitta.store.get_many(ids).values()
            if FRAGMENT_TAG in m.tags and m.superseded_by is None
            and m.realm == row.realm and turns & set(drawn_from(m.source))]  # fmt: skip


def _supersede_fragments(chitta: Chitta, new: str, vector: np.ndarray, cited: set[str],
                         fragments: list[Memory]) -> int:  # fmt: skip
    """Supersede the ``fragments`` of the ``cited`` turns that say what ``new`` says (each
    at most once: one superseded here is not offered to the next memory)."""
    mine = [m for m in fragments if cited & set(drawn_from(m.source))]
    if not mine:
        return 0
    vectors = chitta.store.vectors_for([m.id for m in mine])
    replaced = 0
    for fragment in mine:
        other = vectors.get(fragment.id)
        if other is None or float(np.dot(other, vector)) < SUPERSEDE_COSINE:
            continue
        try:
            chitta.supersede(fragment.id, new)
        except BadArgument:  # another agent's or channel's fragment: it stays as it is
            continue
        fragments.remove(fragment)
        replaced += 1
    return replaced

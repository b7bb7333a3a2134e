"""The Python API: a store and an embedder together, with the lifecycle rules of seed 001.

``Chitta.open(settings)`` opens (or creates) the configured store in this process, or, when a
daemon holds it, returns a :class:`~chitta.remote.DaemonChitta` with the same methods. Every
operation validates its input before touching the store, so a refused call changes nothing.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chitta import __version__, hygiene, spool
from chitta.code.links import link_memory
from chitta.code.stale import as_of_runs
from chitta.config import DEDUP_COSINE, DEFAULT_REALM, RecallSwitches, Settings, load_settings
from chitta.distill.rules import fragments
from chitta.distill.sessions import note_turn
from chitta.distill.settings import DistillSettings, load_distill_settings
from chitta.distill.turns import fragment_memory, is_turn
from chitta.diversity import BURST_LOOKBACK, adds_nothing, burst_of
from chitta.embed.base import Embedder
from chitta.embed.cross_encoder import LazyCrossEncoder, shared_cross_encoder
from chitta.embed.loader import build_embedder
from chitta.embed.pieces import pieces_by_id, pieces_of
from chitta.errors import BadArgument, DaemonUnavailable, EmbedError, MemoryNotFound
from chitta.learn.context import query_context
from chitta.learn.learner import IMPLICIT_WEIGHT, Learner
from chitta.provenance import Provenance
from chitta.provenance import provenance as provenance_chain
from chitta.recall.confidence import calibration as calib
from chitta.recall.confidence.gate import GateSettings
from chitta.recall.config import XR_WEIGHT, RecallConfig, preset
from chitta.recall.observe import admit_lines, profile_line
from chitta.recall.pipeline import Tuner, recall
from chitta.recall.query import QueryPlan
from chitta.recall.reconstruct import DEFAULT_BUDGET, Reconstruction, check_budget, items_within
from chitta.recall.rerank import fetch_limit, rerank_result
from chitta.recall.result import RecallResult
from chitta.recall.scoring_config import DEFAULT as DEFAULT_SCORING
from chitta.recall.scoring_config import ScoringConfig, load_scoring
from chitta.recall.session import MAX_SHOWN, SessionLog
from chitta.recall.shown import ShownLog
from chitta.recall.timecue.apply import apply_cue
from chitta.recall.timecue.cue import as_given, parse_time_cue
from chitta.recall.trace import build_trace
from chitta.recall.usage import Usage, drawn_on
from chitta.relations.analogy import Analogy, recall_analogy
from chitta.relations.service import Relations
from chitta.store.access import AccessRecord
from chitta.store.backends import location_key, open_store
from chitta.store.base import Store
from chitta.store.confidence import (
    INITIAL_STRENGTH,
    Confidence,
    observe,
    reinforce,
    tier_for,
    weaken_strength,
)
from chitta.store.ids import new_id
from chitta.store.kinds import DECAY_RATE, DEFAULT_KIND, Kind, parse_kind
from chitta.store.provenance import replication_key
from chitta.store.records import Memory, Scope, Source
from chitta.store.terms import TermStats, words
from chitta.subconscious.decay import Decayed, decay_some
from chitta.validate import MAX_TAGS, check_content, check_scope_name, parse_tags, parse_time

if TYPE_CHECKING:
    from chitta.remote import DaemonChitta
    from chitta.subconscious.embedding import EmbedQueue

log = logging.getLogger(__name__)

MS_PER_DAY = 86_400_000
#: Memories decayed per transaction by :meth:`Chitta.decay`.
DECAY_BATCH = 500
#: A deferred remember's check for the same text: its longest words searched, hits read.
SAME_TEXT_WORDS = 8
SAME_TEXT_HITS = 5
#: The store's meta key that holds its own calibration (`chitta calibrate`).
CALIBRATION_KEY = "calibration"


def now_ms() -> int:
    return int(time.time() * 1000)


def clock_for(offset_ms: int) -> Callable[[], int]:
    """The clock in milliseconds, moved by ``offset_ms`` (CHITTA_CLOCK_OFFSET_MS)."""
    if not offset_ms:
        return now_ms
    return lambda: now_ms() + offset_ms


@dataclass(frozen=True, slots=True)
class Remembered:
    """What ``remember`` did: the memory's id, and whether it reinforced an existing one."""

    id: str
    deduplicated: bool = False
    similarity: float | None = None  # cosine to the existing memory, when deduplicated
    #: Deduplicated by diversity sampling (chitta/diversity.py): the memory repeated one its
    #: session stored moments ago, rather than one anywhere in the scope.
    burst: bool = False
    truncated: bool = False
    supersedes: str | None = None
    #: False when it was stored without its vector, which follows shortly (the daemon was
    #: busy: subconscious/embedding.py); found by its words meanwhile.
    embedded: bool = True
    #: An agent session's turn: the memories the model-free distiller stored from it, or
    #: reinforced (distill/rules.py).
    distilled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Repeat:
    """A stored memory that a new one repeats (the quality gate's rules 2 and 3)."""

    id: str
    similarity: float
    burst: bool  # rule 3: one its session stored moments ago


@dataclass(frozen=True, slots=True)
class Embedded:
    """What an embedding-queue step did: memories given their vectors, and those of them
    that repeated a stored memory and were folded into it."""

    embedded: int = 0
    folded: int = 0


def make_scope(
    realm: str | None, agent_id: str | None, channel: str | None, default: str = DEFAULT_REALM
) -> Scope:
    """A validated read scope; an agent or channel of ``None`` or ``""`` is not filtered, a
    realm of ``None`` or ``""`` is ``default``."""
    return Scope(
        realm=check_scope_name(realm or default, "realm") or default,
        agent_id=check_scope_name(agent_id or None, "agent_id", optional=True),
        channel=check_scope_name(channel or None, "channel", optional=True),
    )


class Chitta:
    """An open store with its embedder: remember, recall, and manage memories."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        clock: Callable[[], int] = now_ms,
        switches: RecallSwitches | None = None,
        scoring: ScoringConfig = DEFAULT_SCORING,
        reranker: LazyCrossEncoder | None = None,
        gate: GateSettings | None = None,
        realm: str = DEFAULT_REALM,
        home: Path | None = None,
        spool_file: Path | None = None,
        distill: bool = True,
        distill_settings: DistillSettings | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.clock = clock
        self.switches = switches or RecallSwitches()
        self.scoring = scoring
        self.reranker = reranker  # the optional cross-encoder stage; None: not configured
        self.gate = gate or GateSettings()  # the admission gate's switches, for traces
        self.opened_at = clock()
        self.sessions = SessionLog()
        self.shown = ShownLog(store)  # what the hooks injected into each session (kept)
        self._calibration: calib.Calibration | None = None
        #: The daemon's embedding queue (subconscious/embedding.py); None: every remember
        #: embeds in line (in this process, no daemon).
        self.embed_queue: EmbedQueue | None = None
        #: Whether an agent session's turns are distilled as they are stored (distill/).
        self.distill = distill
        #: distill.toml: the model that distils finished sessions (none by default), and the
        #: realms that opted out of distillation (distill/settings.py).
        self.distill_settings = distill_settings or DistillSettings()
        #: The resonance learner (learn/learner.py): recall's weights tuned by feedback.
        self.learner = Learner(store, enabled=self.switches.learn)
        #: The realm of a call that names none (the realm rule's choice, chitta/scope.py).
        self.realm = check_scope_name(realm, "realm") or DEFAULT_REALM
        #: The data directory (cited.toml, scoring.json); the store's folder by default.
        self.home = home if home is not None else store.data_dir
        #: Where this store's clients spool the writes no daemon took (chitta/spool.py): the
        #: settings' name for it, which is the clients' (a database URL's own options, such
        #: as sslmode, are part of the name; the store's shown location drops them).
        self.spool_file = spool_file if spool_file is not None else spool.spool_file(
            store.data_dir, location_key(store.location))  # fmt: skip

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        create: bool = True,
        check_model: bool = True,
        embedder: Embedder | None = None,
        through_daemon: bool | None = None,
    ) -> Chitta | DaemonChitta:
        """The configured store: opened in this process, or reached through the daemon that
        holds it. Either way the methods and their result types are the same.

        Without ``settings``, the environment's (:func:`~chitta.config.load_settings`). A call
        that names no realm uses the settings' realm (the realm rule, chitta/scope.py).

        ``through_daemon``: ``None`` (the default) talks to the daemon when one answers on
        the settings' socket and opens the file otherwise; ``True`` requires the daemon
        (:class:`~chitta.errors.DaemonUnavailable` when none answers); ``False`` always opens
        the file here (:class:`~chitta.errors.StoreLocked` while a daemon holds it).

        In this process: a store with vectors from another model than ``embedder`` (default:
        the configured one) is refused unless ``check_model`` is false, ``create`` makes a
        missing store, and the scoring settings come from ``scoring.json`` in the data
        directory, if there is one. Through the daemon those are the daemon's, and
        ``create``, ``check_model`` and ``embedder`` are not used (chitta/remote.py).
        """
        settings = settings if settings is not None else load_settings()
        if through_daemon is not False:
            from chitta.daemon.client import daemon_answers
            from chitta.remote import DaemonChitta

            if daemon_answers(settings.socket_path):
                return DaemonChitta(settings.socket_path, realm=settings.realm.name,
                                    home=settings.home)  # fmt: skip
            if through_daemon:
                raise DaemonUnavailable(f"no chitta daemon answers on {settings.socket_path}")
        scoring = load_scoring(settings.home, settings.recall.replication_max)
        embedder = embedder if embedder is not None else build_embedder(settings.embed)
        store = open_store(settings.store_location, create=create, home=settings.home)
        try:
            if check_model:
                store.bind_model(embedder.identity())
        except BaseException:
            store.close()
            raise
        reranker = shared_cross_encoder(settings.rerank) if settings.rerank.configured else None
        return cls(store, embedder, switches=settings.recall, scoring=scoring, reranker=reranker,
                   gate=settings.gate, realm=settings.realm.name, home=settings.home,
                   clock=clock_for(settings.clock_offset_ms),
                   spool_file=settings.spool_path, distill=settings.distill,
                   distill_settings=load_distill_settings(settings.home))  # fmt: skip

    def close(self) -> None:
        """Close the store, writing the buffered access history first."""
        self.store.close()

    def __enter__(self) -> Chitta:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -------------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        kind: str | Kind | None = None,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        tags: str | Sequence[str] | None = None,
        source: Source | None = None,
        event_time: object = None,
        supersedes: str | None = None,
        confidence: float | None = None,
    ) -> Remembered:
        """Store one memory through the quality gate; a near-duplicate reinforces instead."""
        text = check_content(content)
        the_kind = parse_kind(kind) if kind is not None else DEFAULT_KIND
        the_tags = parse_tags(tags)
        event_ms = parse_time(event_time, "event_time")
        # A memory's own scope is exact: no agent or channel is stored as "", not "any".
        named = make_scope(realm, agent_id, channel, self.realm)
        scope = replace(named, agent_id=named.agent_id or "", channel=named.channel or "")
        if confidence is not None and (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0.0 < confidence < 1.0
        ):
            raise BadArgument(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
        if supersedes is not None:
            old = self.store.get(supersedes)
            if (old.realm, old.agent_id, old.channel) != (
                scope.realm,
                scope.agent_id,
                scope.channel,
            ):
                raise BadArgument(
                    f"memory {supersedes} is in another scope; it cannot be superseded"
                )
        vector: np.ndarray | None = None
        truncated = False
        if self.embed_queue is None or not self.embed_queue.should_defer():
            embedding = self.embedder.embed([text])
            vector, truncated = embedding.vectors[0], embedding.truncated[0]
        now = self.clock()
        tau = DECAY_RATE[the_kind]
        conf = (
            Confidence.initial(tau) if confidence is None else Confidence.initial(tau, confidence)
        )
        memory = Memory(
            id=new_id(now),
            kind=the_kind,
            content=text,
            realm=scope.realm,
            agent_id=scope.agent_id or "",
            channel=scope.channel or "",
            tags=the_tags,
            source=source or Source(),
            created_at=now,
            updated_at=now,
            event_time=event_ms,
            confidence=conf,
            strength=INITIAL_STRENGTH,
            tier=tier_for(INITIAL_STRENGTH),
            decayed_at=now,
            supersedes=supersedes,
            truncated=truncated,
        )
        done = self.insert_gated(memory, vector)
        if not done.deduplicated and self._distils(memory):
            done = replace(done, distilled=self._distill_turn(memory))
            if self.distill_settings.model_configured:  # the daemon's worker sends it later
                note_turn(self, memory)
        return done

    def _distils(self, memory: Memory) -> bool:
        """Whether ``memory`` is a turn to distil: distillation on (CHITTA_DISTILL), and its
        realm not opted out (distill.toml's ``distill = false``)."""
        return (self.distill and is_turn(memory)
                and self.distill_settings.realm_on(memory.realm))  # fmt: skip

    def insert_gated(
        self, memory: Memory, vector: np.ndarray | None, *, besides: Kind | None = None
    ) -> Remembered:
        """Store ``memory`` through the quality gate's duplicate rules (a repeat reinforces
        the memory it repeats instead); memories of kind ``besides`` are not compared."""
        # The near-duplicate check and the write it decides are one step for every writer of
        # the store: the same text remembered at once through two daemons on one database
        # gives one memory and a reinforcement, never two memories.
        # A deferred memory meets the duplicate rules when its vector arrives (embed_waiting).
        with self.store.write_lock():
            if memory.supersedes is None:
                repeat = None
                if vector is not None:
                    repeat = self.repeat_of(memory, vector, besides=besides)
                # The same text may wait in the queue without a vector for the rule above.
                if repeat is None and (vector is None or self._others_waiting()):
                    repeat = self._same_text(memory)
                if repeat is not None:
                    return self._reinforce_duplicate(repeat.id, repeat.similarity, memory.tags,
                                                     memory.source, burst=repeat.burst)  # fmt: skip
            before = self._turns_before([memory]) if vector is not None else {}
            pieces = vector is not None and bool(pieces_of(memory.content, before.get(memory.id)))
            # When the daemon's queue is to embed them after the reply, the memory is marked
            # as awaiting them in the insert's own transaction: a daemon killed before its
            # worker gets there leaves it to the next one's (store.awaiting_pieces), not
            # without its sentences.
            queued = pieces and self.embed_queue is not None
            self.store.insert([(memory, vector)], awaiting_pieces=[memory.id] if queued else ())
        if pieces:
            self._sentences_of(memory, before)
        if vector is None and self.embed_queue is not None:
            self.embed_queue.deferred += 1
            self.embed_queue.add(memory.id, memory.realm)
        # The symbols it names (docs/code.md): nothing to do in a realm with no code indexed.
        link_memory(self.store, memory.realm, memory.id, memory.content, memory.created_at)
        return Remembered(id=memory.id, truncated=memory.truncated, supersedes=memory.supersedes,
                          embedded=vector is not None)  # fmt: skip

    def _distill_turn(self, turn: Memory) -> tuple[str, ...]:
        """Store what the model-free distiller finds in an agent session's ``turn``
        (distill/rules.py): each fragment verbatim, tagged ``operational``, its source the
        turn; compared with the memories that are not episodes (its own turn says the same),
        so a fragment that repeats a stored one reinforces it. The ids, new or reinforced."""
        found = fragments(turn.content, turn.source.role or "")
        if not found:
            return ()
        embedded = self.embedder.embed([f.text for f in found])
        ids = []
        for fragment, vector, truncated in zip(found, embedded.vectors, embedded.truncated,
                                               strict=True):  # fmt: skip
            now = self.clock()
            memory = fragment_memory(turn, fragment, new_id(now), now, truncated)
            ids.append(self.insert_gated(memory, vector, besides=Kind.EPISODE).id)
        return tuple(dict.fromkeys(ids))

    def _sentences_of(self, memory: Memory, before: Mapping[str, str]) -> None:
        """Give a memory just stored with its vector, one that has pieces (its sentences, and
        a turn's with the turn ``before`` it), their vectors: through the daemon's embedding
        queue, which embeds them after the reply (a model call the ``remember`` need not wait
        for, subconscious/embedding.py), or in line when there is no queue or it is full
        (storing the pieces clears the memory's mark)."""
        if self.embed_queue is None or not self.embed_queue.add_sentences(memory.id):
            self.give_pieces([memory], before=before)

    def give_pieces(
        self,
        memories: Sequence[Memory],
        writing: Callable[[], AbstractContextManager[object]] = nullcontext,
        *,
        before: Mapping[str, str] | None = None,
    ) -> int:
        """Embed and store the pieces of ``memories`` that have them (their sentences, and a
        turn's with the turn before it, embed/pieces.py); how many got theirs. The model runs
        outside ``writing`` (the daemon's writer lock, for its worker), the write inside. The
        memories are stored already: when the model fails here they keep their whole vector
        alone, which recall reads as before, and ``chitta reembed`` gives them their pieces
        later. ``before``: the turns before them, when the caller has read them already."""
        before = self._turns_before(memories) if before is None else before
        try:
            found = pieces_by_id(self.embedder, [(m.id, m.content) for m in memories], before)
        except EmbedError as exc:
            log.warning("%d memories stored without their sentences' vectors: %s",
                        len(memories), exc)  # fmt: skip
            return 0
        none = [m.id for m in memories if m.id not in found]  # e.g. the turn before forgotten
        if not found and not none:
            return 0
        with writing():
            self.store.drop_pieces(none)  # any mark it waited under, or pieces made before
            return self.store.set_pieces(found) if found else 0

    def _turns_before(self, memories: Sequence[Memory]) -> dict[str, str]:
        """The text of the turn before each of ``memories`` that is a conversation's turn
        (kind ``episode``) in an episode or a session, by its id (embed/pieces.py says why)."""
        turns = [m for m in memories if m.kind is Kind.EPISODE
                 and (m.episode_id is not None or m.source.session)]  # fmt: skip
        if not turns:
            return {}
        ids = self.store.turns_before(turns)
        texts = self.store.get_many(sorted(set(ids.values())))
        return {mid: texts[b].content for mid, b in ids.items() if b in texts}

    def repeat_of(
        self, memory: Memory, vector: np.ndarray, *, besides: Kind | None = None
    ) -> Repeat | None:
        """The stored memory that ``memory`` (with ``vector``) repeats, if any: a
        near-duplicate in its scope that it adds nothing to (rule 2, cosine
        :data:`~chitta.config.DEDUP_COSINE`), else one its session stored moments ago
        (rule 3, chitta/diversity.py). Memories of kind ``besides`` are left out of both.
        Call under the store's write lock."""
        scope = Scope(memory.realm, memory.agent_id, memory.channel)
        near = self.store.vector_search(vector, scope, 2 if besides is None else 8)
        near = [d for d in near if d[0] != memory.id]
        if besides is not None and near:
            kinds = {i: m.kind for i, m in self.store.get_many([i for i, _ in near]).items()}
            near = [d for d in near if kinds.get(d[0]) not in (None, besides)]
        if near and near[0][1] >= DEDUP_COSINE and self._repeats(memory.content, near[0][0]):
            return Repeat(near[0][0], near[0][1], burst=False)
        burst = self._burst_of(memory, vector, besides)
        return None if burst is None else Repeat(burst[0], burst[1], burst=True)

    def _others_waiting(self) -> bool:
        """Whether memories of this process wait for their vectors (the embedding queue)."""
        return self.embed_queue is not None and len(self.embed_queue) > 0

    def _same_text(self, memory: Memory) -> Repeat | None:
        """A current memory of ``memory``'s scope with the very same text (found by its
        longest words through the keyword index): the one repeat a deferred memory can be
        folded into before it has a vector. Many clients remembering one text at once under
        load still make one memory."""
        longest = sorted(words(memory.content), key=lambda w: (-len(w), w))[:SAME_TEXT_WORDS]
        scope = Scope(memory.realm, memory.agent_id, memory.channel)
        hits = [i for i, _ in self.store.keyword_search(longest, scope, SAME_TEXT_HITS)]
        found = self.store.get_many(hits)
        for memory_id in hits:
            m = found.get(memory_id)
            if m is not None and m.superseded_by is None and m.content == memory.content:
                return Repeat(memory_id, 1.0, burst=False)
        return None

    def embed_waiting(
        self, ids: Sequence[str], writing: Callable[[], AbstractContextManager[object]]
    ) -> Embedded:
        """Give the memories ``ids``, stored without a vector, their vectors (the embedding
        queue, subconscious/embedding.py): embedded in one batch outside any lock, then each
        under ``writing`` (the daemon's writer lock) and the store's write lock, where the
        duplicate rules ``remember`` skipped are applied: a live memory that repeats a stored
        one is superseded by it, which is reinforced. One that is gone is skipped."""
        found = [m for i in ids if (m := self._get_any(i)) is not None]
        if not found:
            return Embedded()
        embedding = self.embedder.embed([m.content for m in found])
        given = folded = 0
        kept: list[Memory] = []  # given their vector and not folded: their sentences next
        for m, vector, truncated in zip(found, embedding.vectors, embedding.truncated,
                                        strict=True):  # fmt: skip
            with writing(), self.store.write_lock():
                fresh = self._get_any(m.id)
                if fresh is None:
                    continue  # purged meanwhile
                changed = replace(fresh, truncated=True) if truncated else fresh
                live = fresh.deleted_at is None and fresh.superseded_by is None
                repeat = self.repeat_of(fresh, vector) if live and not fresh.supersedes else None
                if repeat is not None:
                    self._reinforce_duplicate(repeat.id, repeat.similarity, fresh.tags,
                                              fresh.source, burst=repeat.burst)  # fmt: skip
                    changed = replace(changed, superseded_by=repeat.id, updated_at=self.clock())
                    folded += 1
                else:
                    kept.append(fresh)
                if changed != fresh:
                    self.store.update(changed)
                given += self.store.set_vectors({m.id: vector})
        self.give_pieces(kept, writing)
        return Embedded(given, folded)

    def _get_any(self, memory_id: str) -> Memory | None:
        """The memory, forgotten or not; None when it does not exist."""
        try:
            return self.store.get(memory_id, include_deleted=True)
        except MemoryNotFound:
            return None

    def _repeats(self, text: str, memory_id: str) -> bool:
        """Whether ``text`` adds nothing to the stored memory (chitta/diversity.py): a
        near-duplicate by cosine that names another number, name or identifier ("port 5433"
        beside "port 5432": cosine 0.97) is a new fact, stored, not folded."""
        return adds_nothing(text, self.store.get(memory_id).content)

    def _burst_of(
        self, memory: Memory, vector: np.ndarray, besides: Kind | None = None
    ) -> tuple[str, float] | None:
        """The memory of this session that ``memory`` repeats (chitta/diversity.py), if any;
        memories of kind ``besides`` are not compared."""
        session = memory.source.session
        if not session:
            return None
        ids = self.store.session_recent(session, BURST_LOOKBACK)
        if not ids:
            return None
        found, vectors = self.store.get_many(ids), self.store.vectors_for(ids)
        recent = [(found[i], vectors[i]) for i in ids
                  if i in found and i in vectors and found[i].kind != besides]  # fmt: skip
        return burst_of(memory, vector, recent)

    def _reinforce_duplicate(
        self,
        memory_id: str,
        similarity: float,
        tags: tuple,
        source: Source | None,
        *,
        burst: bool = False,
    ) -> Remembered:
        old = self.store.get(memory_id)
        key = replication_key(source) if source else None
        if key and key != replication_key(old.source):
            # Another session (file, URL) stored it again: evidence for the replication
            # factor. The same one again is a repeated read and counts nothing.
            self.store.add_replication(memory_id, key, self.clock())
        merged = tuple(dict.fromkeys(old.tags + tags))[:MAX_TAGS]
        updated = replace(
            old,
            confidence=observe(old.confidence, 1.0),
            strength=reinforce(old.strength),
            tier=tier_for(reinforce(old.strength)),
            tags=merged,
            updated_at=self.clock(),
        )
        self.store.update(updated)
        return Remembered(
            id=memory_id,
            deduplicated=True,
            similarity=round(similarity, 4),
            truncated=old.truncated,
            burst=burst,
        )

    def supersede(self, old_id: str, new_id_: str) -> None:
        """Mark ``new_id_`` as the memory that replaces ``old_id``."""
        if old_id == new_id_:
            raise BadArgument("a memory cannot supersede itself")
        with self.store.write_lock():  # both rows as read, then written: no writer between
            old, new = self.store.get(old_id), self.store.get(new_id_)
            if (old.realm, old.agent_id, old.channel) != (new.realm, new.agent_id, new.channel):
                # Recall reads one scope: OLD would vanish from its own with nothing in its place.
                raise BadArgument(
                    f"memory {old_id} is in realm {old.realm!r} and {new_id_} in realm "
                    f"{new.realm!r} (or another agent or channel); a memory can only supersede "
                    "one of its own scope"
                )
            now = self.clock()
            self.store.update_many(
                [
                    replace(old, superseded_by=new.id, updated_at=now),
                    replace(new, supersedes=old.id, updated_at=now),
                ]
            )

    def edit(
        self, memory_id: str, *, kind: str | Kind | None = None,
        tags: str | Sequence[str] | None = None,
    ) -> Memory:  # fmt: skip
        """Correct a memory by hand: its ``kind`` (its decay rate follows) and its ``tags``
        (replaced whole; ``[]`` removes them all). Its text stays: a memory that says
        something else is a new memory that supersedes it."""
        new_kind = parse_kind(kind) if kind is not None else None
        new_tags = parse_tags(tags) if tags is not None else None
        with self.store.write_lock():
            m = self.store.get(memory_id)
            changes: dict[str, Any] = {"updated_at": self.clock()}
            if new_kind is not None and new_kind is not m.kind:
                changes["kind"] = new_kind
                changes["confidence"] = replace(m.confidence, tau=DECAY_RATE[new_kind])
            if new_tags is not None:
                changes["tags"] = new_tags
            updated = replace(m, **changes)
            self.store.update(updated)
        return updated

    def strengthen(self, memory_id: str) -> Memory:
        """Positive evidence: confidence observes 1, strength goes up one step."""
        with self.store.write_lock():  # read, change, write: no other writer's in between
            m = self.store.get(memory_id)
            strength = reinforce(m.strength)
            updated = replace(
                m,
                confidence=observe(m.confidence, 1.0),
                strength=strength,
                tier=tier_for(strength),
                updated_at=self.clock(),
            )
            self.store.update(updated)
        self.learner.credit([memory_id], 1.0, now=self.clock())
        return updated

    def weaken(self, memory_id: str) -> Memory:
        """Negative evidence: confidence observes 0, strength goes down one step."""
        with self.store.write_lock():  # read, change, write: no other writer's in between
            m = self.store.get(memory_id)
            strength = weaken_strength(m.strength)
            updated = replace(
                m,
                confidence=observe(m.confidence, 0.0),
                strength=strength,
                tier=tier_for(strength),
                updated_at=self.clock(),
            )
            self.store.update(updated)
        self.learner.credit([memory_id], -1.0, now=self.clock())
        return updated

    def decay(self, now: int | None = None) -> Decayed:
        """Apply each memory's kind decay for the time since it was last decayed (and move
        its tier with its strength), a batch at a time (subconscious/decay.py)."""
        now = self.clock() if now is None else now
        done = Decayed()
        batch: list[str] = []
        for m in self.store.iter_memories(batch=DECAY_BATCH):
            batch.append(m.id)
            if len(batch) == DECAY_BATCH:
                done += decay_some(self.store, batch, now)
                batch = []
        return done + decay_some(self.store, batch, now) if batch else done

    def hygiene(self, realm: str | None = None, *, dry_run: bool = False) -> hygiene.Plan:
        """Merge the realm's near-duplicate clusters and list its value conflicts
        (chitta/hygiene.py); with ``dry_run`` only what it would do. The plan names the run
        to undo when anything was merged."""
        name = check_scope_name(realm, "realm") or self.realm
        found = hygiene.plan(self.store, name)
        return (
            found if dry_run or not found.merges else hygiene.apply(self.store, found, self.clock())
        )

    def hygiene_undo(self, run: str) -> int:
        """Put back what hygiene run ``run`` merged; how many memories came back."""
        return hygiene.undo(self.store, run, self.clock())

    def forget(self, memory_id: str) -> Memory:
        """Soft delete: hidden from every read, recoverable with :meth:`restore`."""
        self.store.get(memory_id)
        return self.store.set_deleted(memory_id, self.clock())

    def restore(self, memory_id: str) -> Memory:
        """Bring back a forgotten memory."""
        m = self.store.get(memory_id, include_deleted=True)
        if m.deleted_at is None:
            return m
        return self.store.set_deleted(memory_id, None)

    def purge(self, memory_id: str) -> None:
        """Remove a memory for good (forgotten or not)."""
        self.store.purge(memory_id)

    # --- calibration ---------------------------------------------------------------------------

    @property
    def calibration(self) -> calib.Calibration:
        """The store's own fit (`chitta calibrate`), or the default one. A stored fit that
        cannot be read, or that was made with another embedding model, is not used: the
        default stands in, and its source says why (so does the default's, when it was
        fitted on another model than this store's)."""
        if self._calibration is None:
            self._calibration = self._load_calibration()
        return self._calibration

    def _load_calibration(self) -> calib.Calibration:
        model = self.embedder.identity().name
        raw = self.store.meta(CALIBRATION_KEY)
        fit, why = calib.DEFAULT, ""
        if raw:
            try:
                fit = calib.Calibration.from_json(raw)
                if fit.feature != calib.FEATURE:
                    raise BadArgument(f"it calibrates {fit.feature!r}, not {calib.FEATURE!r}")
                if fit.model is not None and fit.model != model:
                    raise BadArgument(f"it was fitted with the model {fit.model}, not {model}")
                return fit
            except BadArgument as exc:
                fit, why = calib.DEFAULT, f"stored fit unusable: {exc}"
        if not why and fit.model != model:
            why = f"fitted on {fit.model}, not {model}: run `chitta calibrate`"
        return replace(fit, source=f"default ({why})") if why else fit

    def set_calibration(self, fit: calib.Calibration | None) -> None:
        """Store ``fit`` as this store's calibration; ``None`` goes back to the default."""
        if fit is None:
            self.store.delete_meta(CALIBRATION_KEY)
        else:
            self.store.set_meta(CALIBRATION_KEY, fit.to_json())
        self._calibration = None

    # --- reading -------------------------------------------------------------------------------

    def provenance(self, memory_id: str) -> Provenance:
        """Where ``memory_id`` came from: its source, the trust recall gives it, the turns it
        was drawn from, its replications and supersede links (chitta/provenance.py)."""
        return provenance_chain(self.store, self.scoring, memory_id)

    def get(self, memory_id: str, *, include_deleted: bool = False) -> Memory:
        return self.store.get(memory_id, include_deleted=include_deleted)

    def recall(
        self,
        query: str,
        *,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        limit: int = 10,
        strategy: str = "hybrid",
        ablate: Sequence[str] = (),
        include_superseded: bool = False,
        fusion: str | None = None,
        cross_realm: bool = False,
        disable_hdc: bool = False,
        session: str | None = None,
        rerank: bool = True,
        record: bool = True,
        trace: bool = False,
        time_cue: object = None,
        now: object = None,
        as_of_commit: str | None = None,
    ) -> RecallResult:
        """The best ``limit`` memories for ``query`` in one scope.

        ``fusion`` overrides the strategy's ("rrf" or "rsf"); ``cross_realm`` adds the ``xr``
        lane (the store's other realms, marked as such); ``disable_hdc`` skips the ``hdc`` lane.
        ``session`` names the asking agent session: what it stored and was shown lately
        primes this recall (the ``ctx`` lane), and this recall's best hits prime its next.
        With a reranker configured, ``rerank=False`` skips the cross-encoder stage.
        ``record=False`` leaves nothing in the store's access history or the session (a
        measurement, such as `chitta calibrate`, must not teach the store its answers).
        ``trace=True`` adds the trace v1 record (recall/trace.py) and changes nothing else.
        ``time_cue`` says roughly when (seed 002 §2, docs/time-cue.md): a cue that cannot be
        read is refused; a usable one moves returned rows a bounded number of places and adds
        at most L seats after the count (recall/timecue/apply.py).
        ``now`` is when the question is asked (ISO 8601 or epoch ms; default: the clock): the
        time the recency factor and the time cue read, so a relative cue such as last week
        counts back from it. The access history is still recorded at the clock's time.
        A hit linked to a symbol whose code changed since carries ``possibly_stale`` marks
        (code/stale.py); ``as_of_commit`` judges them against the symbol table as it was at
        that commit's index (:class:`~chitta.errors.CommitNotIndexed` when there is none).
        """
        if not isinstance(query, str):
            raise BadArgument(f"query must be text, got {type(query).__name__}")
        asked_at = parse_time(now, "now")  # refused before any work, like a bad cue
        cue = None if time_cue is None else parse_time_cue(time_cue)
        config = preset(strategy)
        if fusion is not None:
            config = replace(config, fusion=fusion)
        if cross_realm:
            config = config.with_lane("xr", XR_WEIGHT)
        off = set(ablate) | set(self.switches.ablate_lanes) | ({"hdc"} if disable_hdc else set())
        if off:
            config = config.without(off)
        scope = make_scope(realm, agent_id, channel, self.realm)
        name = check_scope_name(session or None, "session", optional=True)
        if as_of_commit is not None and not isinstance(as_of_commit, str):
            raise BadArgument(f"as_of_commit must be text, got {type(as_of_commit).__name__}")
        code_as_of = None if as_of_commit is None else as_of_runs(self.store, scope.realm,
                                                                 as_of_commit)  # fmt: skip
        view = None
        if name is not None:
            view = self.sessions.view(name, self.store.session_recent(name, MAX_SHOWN))
        clock = self.clock()
        reranker = self.reranker if rerank else None
        learned_as = strategy if fusion is None else f"{strategy}+{fusion}"
        result = recall(
            self.store,
            self.embedder,
            query,
            scope,
            limit=limit if reranker is None else fetch_limit(limit),
            config=config,
            include_superseded=include_superseded,
            session=view,
            scoring=self.scoring,
            now_ms=clock if asked_at is None else asked_at,
            calibration=self.calibration,
            time_cue=cue,
            cue_time_limit_ms=self.switches.cue_time_limit_ms,
            code_as_of=code_as_of,
            tuner=self._tuner(query, scope.realm, learned_as, explore=record),
        )
        if reranker is not None:
            result = rerank_result(result, reranker, limit=limit, scoring=self.scoring)
        if cue is not None:  # after the count and the reranker (seed 002 §2.9)
            result = apply_cue(result, self.store, include_superseded=include_superseded)
        if trace:
            # What the pipeline ran at: 4 x limit when the reranker cuts to the limit after it.
            ran = limit if reranker is None else fetch_limit(limit)
            request = {"limit": limit, "depth": config.depth(ran), "strategy": strategy,
                       "fusion": config.fusion, "lanes": config.fusion_weights(),
                       "include_superseded": include_superseded, "cross_realm": cross_realm,
                       "disable_hdc": disable_hdc, "session": name is not None,
                       "rerank": reranker is not None,
                       "time_cue": None if cue is None else as_given(time_cue)}  # fmt: skip
            result = replace(result, trace=self._trace(result, request, config, ran))
        if record:  # at the clock's time: a given now is the question's, not the reading's
            self._record_access(result, clock)
            self.learner.note(scope.realm, learned_as, result, name, clock)
        if name is not None and record:
            terms = result.plan.terms if result.plan else ()
            self.sessions.note(name, [h.memory.id for h in result.hits], terms)
        if self.embed_queue is not None and (waiting := self.embed_queue.waiting(scope.realm)):
            result = replace(result, unembedded=waiting)  # found by their words only, for now
        if self.switches.profile:
            print(profile_line(result), file=sys.stderr)
        if self.switches.admit_debug:
            print("\n".join(admit_lines(result)), file=sys.stderr)
        return result

    def session_shown(
        self, session: str, *, add: Sequence[str] = (), forget: bool = False
    ) -> tuple[str, ...]:
        """The ids the hooks put into agent session ``session``'s context (recall/shown.py),
        after forgetting them if ``forget`` and adding ``add``; kept in the store, bounded."""
        name = check_scope_name(session or None, "session")
        if isinstance(add, str) or not all(isinstance(i, str) and i for i in add):
            raise BadArgument("add must be a list of memory ids")
        if not add and not forget:
            return self.shown.shown(name)
        return self.shown.update(name, list(add), forget=forget, at=self.clock())

    def session_used(self, session: str, answer: str, *, prompt: str = "") -> Usage:
        """Which memories the session's last prompt was given that ``answer`` (to ``prompt``)
        draws on (recall/usage.py); every pair of them, when two or more, gains Hebbian
        co-access weight. The last batch is taken: a second call for one answer finds none."""
        name = check_scope_name(session or None, "session")
        if not isinstance(answer, str) or not isinstance(prompt, str):
            raise BadArgument("answer and prompt must be text")
        now = self.clock()
        given = self.shown.take_last(name, now)
        live = self.store.get_many(list(given)) if given else {}
        texts = [(i, live[i].content) for i in given if i in live and live[i].deleted_at is None]
        used = drawn_on(texts, answer, prompt)
        together = tuple(used[: self.scoring.hebbian_top])
        if len(together) >= 2 and self.scoring.hebbian_step > 0:
            self.store.record_access(AccessRecord((), now, together, self.scoring.hebbian_step))
        linked = len(together) * (len(together) - 1) // 2 if self.scoring.hebbian_step > 0 else 0
        self.learner.credit(used, 1.0, weight=IMPLICIT_WEIGHT, session=name, now=now)
        return Usage(name, len(given), tuple(used), linked)

    def reconstruct(
        self,
        query: str,
        *,
        realm: str | None = None,
        agent_id: str | None = None,
        channel: str | None = None,
        limit: int = 10,
        budget: int = DEFAULT_BUDGET,
        strategy: str = "hybrid",
        session: str | None = None,
        trace: bool = False,
        time_cue: object = None,
        now: object = None,
    ) -> Reconstruction:
        """The answer to ``query`` as items quoting the recalled records, within ``budget``
        characters of quotes (recall/reconstruct.py). With ``trace``, the recall's trace is
        kept on the result, for the caller's ``trace.recall``. ``time_cue`` and ``now`` are
        the recall's, as in :meth:`recall` (the cue's seats are quoted too)."""
        check_budget(budget)
        result = self.recall(
            query,
            realm=realm,
            agent_id=agent_id,
            channel=channel,
            limit=limit,
            strategy=strategy,
            session=session,
            trace=trace,
            time_cue=time_cue,
            now=now,
        )
        items, omitted = items_within(result.hits, budget)
        return Reconstruction(tuple(items), tuple(omitted), budget, result)

    def _tuner(self, query: str, realm: str, strategy: str, *, explore: bool) -> Tuner | None:
        """The learner's hook into one recall (pipeline.py's ``tuner``); None when it is off.
        ``explore``: draw the parameters (a recorded recall), else use their means."""
        if not self.learner.enabled:
            return None

        def tune(config: RecallConfig, plan: QueryPlan, stats: TermStats) -> tuple:
            features = query_context(query, plan.terms, lambda w: stats.df(realm, w),
                                     stats.size(realm))  # fmt: skip
            return self.learner.tune(realm, strategy, config, query, features, explore=explore)

        return tune

    def _trace(self, result: RecallResult, request: dict, config: RecallConfig, ran: int) -> dict:
        identity = self.embedder.identity()
        settings = {
            "embedding": {"model": identity.name, "dim": identity.dim},
            "rrf_k": config.rrf_k, "pool": config.pool(ran), "scoring": config.scoring,
            "inhibition": config.inhibition, "corrections": config.corrections,
            "gate": {"silence": self.gate.silence,
                     "kw_single_token_min": self.gate.kw_single_token_min},
            "autocut": False,
            "reranker": None if self.reranker is None else self.reranker.name,
        }  # fmt: skip
        scoring = "seed-000-defaults" if self.scoring == DEFAULT_SCORING else "scoring.json"
        return build_trace(result, request=request, config=settings,
                           calibration=self.calibration, gate=self.gate,
                           server_version=__version__, scoring_version=scoring)  # fmt: skip

    def _record_access(self, result: RecallResult, now: int) -> None:
        """Buffer the hits' access (ACT-R), written in batches. Being returned together
        links nothing: memories are linked when an answer used them (``session_used``)."""
        ids = tuple(h.memory.id for h in result.hits)
        if ids:
            self.store.record_access(AccessRecord(ids, now))

    # --- maintenance ---------------------------------------------------------------------------

    def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory again with the configured model and record that model."""
        memories = list(self.store.iter_memories(include_deleted=True))
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(memories), 256):
            batch = memories[start : start + 256]
            embedded = self.embedder.embed([m.content for m in batch])
            vectors.update((m.id, v) for m, v in zip(batch, embedded.vectors, strict=True))
            if progress:
                progress(min(start + 256, len(memories)), len(memories))
        self.store.replace_model(self.embedder.identity(), vectors)
        for start in range(0, len(memories), 256):
            self.give_pieces(memories[start : start + 256])
        # A fit of the old model's cosines says nothing about the new model's.
        self.set_calibration(None)
        return len(memories)

    def backup(self, dest: Path) -> None:
        self.store.backup_to(dest)

    def restore_backup(self, source: Path) -> Path:
        """Replace the store's contents with the backup at ``source`` (the backup is checked
        first, not the store: see :func:`restore_backup_offline` for one that will not open);
        where the old contents were kept (``.damaged-`` in the name when they were)."""
        saved = self.store.restore_from(source)
        self._calibration = None  # the restored contents carry their own fit, or none
        self.sessions = SessionLog()
        return saved

    @property
    def relations(self) -> Relations:
        """This store's triplets and entity aliases (relations/service.py)."""
        return Relations(self.store, self.clock, self.realm)

    def recall_analogy(self, a: object, b: object, c: object, **options: object) -> Analogy:
        """a:b :: c:? over the realm's triplets, or an abstention saying what is missing
        (relations/analogy.py; options: realm, as_of, limit)."""
        options["realm"] = options.get("realm") or self.realm
        return recall_analogy(self.store, a, b, c, now=self.clock(), **options)  # type: ignore[arg-type]

    def status(self) -> dict[str, object]:
        """Figures about the store and the embedder; no stored text."""
        stored = self.store.model_identity()
        configured = self.embedder.identity()
        stats = getattr(self.embedder, "stats", None)
        return {
            "version": __version__,
            "store": self.store.location,
            "schema_version": self.store.schema_version(),
            "size_bytes": self.store.size_bytes(),
            "read_only": self.store.read_only,  # why it cannot be written; None: it can
            "model": configured.as_dict(),
            "store_model": None if stored is None else stored.as_dict(),
            "store_model_matches": stored is None or stored == configured,
            "embed_cache": stats() if callable(stats) else None,
            "calibration": {
                "source": self.calibration.source,
                "threshold": self.calibration.threshold,
            },
            **self.store.counts(),
        }


def restore_backup_offline(source: Path, settings: Settings | None = None) -> Path | None:
    """Replace the configured store with the backup at ``source`` without opening the store:
    the way back for a store too damaged to open (store/backends.py). The backup is checked
    first; the old store's files are kept beside it (``<store>.damaged-<time>`` when they were
    damaged, ``.pre-restore-<time>`` when not). Where they went; None when there was no
    store. :class:`~chitta.errors.StoreLocked` while a process (a daemon) holds the store:
    restore through it then (:meth:`Chitta.restore_backup`)."""
    from chitta.store.backends import restore_offline

    settings = settings if settings is not None else load_settings()
    return restore_offline(settings.store_location, Path(source), home=settings.home)

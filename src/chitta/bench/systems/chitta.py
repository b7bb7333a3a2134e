"""``chitta`` under a recall strategy: turns imported as memories into a real store (a file,
or an empty PostgreSQL database given by URL).

Each turn becomes one memory (its ``dia_id`` as the source reference, its session's time as
``event_time``, and its speaker as the source's ``role`` when the speaker is one:
LongMemEval's ``user`` and ``assistant``, as the hooks record a real session's turns) and
each session an episode, through the JSONL importer (no near-duplicate
gate: LoCoMo repeats short turns such as "Bye!", and each must keep its own id). Several
strategies can share one store: the first system created loads it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from chitta.api import Chitta
from chitta.bench.comention import co_mention_triplets
from chitta.bench.locomo import Conversation
from chitta.bench.turn_vectors import serving_documents
from chitta.config import Settings
from chitta.embed.base import Embedder
from chitta.errors import BadArgument
from chitta.store.ids import new_id
from chitta.transfer import import_jsonl
from chitta.validate import format_time

#: Speakers that are a chat's roles (LongMemEval's); LoCoMo's speakers are people's names.
ROLES = frozenset({"user", "assistant"})


class ChittaStore:
    """One benchmark store shared by the chitta systems of a run."""

    def __init__(
        self, home: Path, embedder: Embedder, triplets: str | None = None, store: str = "bench"
    ) -> None:
        self.home = home
        self.store = store  # a store name under the home, or a database URL
        self.embedder = embedder
        self.triplets = triplets  # "co-mention": derive triplets from the turns (comention.py)
        self.chitta: Chitta | None = None
        self.turn_of: dict[str, str] = {}  # memory id -> dia_id
        self.loaded: set[str] = set()
        # Turns the quality gate refused (under 10 characters), by line: reported, not fatal.
        self.refused: list[tuple[str, str]] = []

    def open(self) -> Chitta:
        if self.chitta is None:
            self.chitta = Chitta.open(
                Settings(home=self.home, store=self.store),
                embedder=self.embedder,
                through_daemon=False,
            )
        return self.chitta

    def load(self, realm: str, conversation: Conversation) -> None:
        if realm in self.loaded:
            return
        chitta = self.open()
        if next(chitta.store.iter_memories(realm=realm, include_deleted=True, batch=1), None):
            # Imported again, every turn would be in the store twice (new ids each run), and
            # a recall would list a turn twice.
            raise BadArgument(
                f"the benchmark store in {self.home} already holds {realm!r} from an earlier "
                "run; give the benchmark a new or empty --workdir"
            )
        with serving_documents(self.embedder):  # a --vector-cache serves the turns
            report = import_jsonl(chitta, _lines(realm, conversation))
        self.refused.extend((realm, message) for _, message in report.errors)
        for m in chitta.store.iter_memories(realm=realm):
            self.turn_of[m.id] = m.source.ref or ""
        if self.triplets == "co-mention":
            memories = list(chitta.store.iter_memories(realm=realm))
            chitta.store.add_triplets(co_mention_triplets(memories, chitta.clock()))
        self.loaded.add(realm)

    def close(self) -> None:
        if self.chitta is not None:
            self.chitta.close()
            self.chitta = None


def _lines(realm: str, conversation: Conversation) -> list[str]:
    """The conversation as JSONL import lines: an episode per session, a memory per turn."""
    lines = []
    episode_of: dict[int, str] = {}
    for number, start in conversation.sessions:
        episode_of[number] = new_id(start) if start is not None else new_id()
        lines.append(json.dumps({
            "type": "episode", "id": episode_of[number], "realm": realm,
            "title": f"{conversation.sample_id} session {number}",
            "started_at": format_time(start), "source": {"ref": f"session_{number}"},
        }))  # fmt: skip
    for turn in conversation.turns:
        source = {"ref": turn.id}
        if turn.speaker in ROLES:  # a user–assistant chat: each side's role, as the hooks keep it
            source["role"] = turn.speaker
        lines.append(json.dumps({
            "type": "memory", "kind": "episode", "content": turn.memory_text, "realm": realm,
            "source": source, "event_time": format_time(turn.event_time),
            "episode_id": episode_of[turn.session],
        }))  # fmt: skip
    return lines


class ChittaSystem:
    """chitta's own recall under one strategy (and optional lane ablations)."""

    def __init__(
        self,
        store: ChittaStore,
        strategy: str,
        ablate: Sequence[str] = (),
        fusion: str | None = None,
    ) -> None:
        self.store = store
        self.strategy = strategy
        self.ablate = tuple(ablate)
        self.fusion = fusion
        suffix = f"-{'-'.join(self.ablate)}" if self.ablate else ""
        self.name = f"chitta:{strategy}{suffix}" + (f"+{fusion}" if fusion else "")

    def setup(self) -> None:
        self.store.open()

    def load(self, realm: str, conversation: Conversation) -> None:
        self.store.load(realm, conversation)

    def run_notes(self) -> list[str]:
        """What the quality gate refused while loading (shared by every strategy's system)."""
        return [f"chitta refused a turn in {realm}: {message}" for realm, message in
                self.store.refused]  # fmt: skip

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        """chitta's recall asked at ``now_ms`` (the question's date): its recency factor and
        time cue read that, not the real clock."""
        result = self.store.open().recall(
            query,
            realm=realm,
            limit=k,
            strategy=self.strategy,
            ablate=self.ablate,
            fusion=self.fusion,
            now=now_ms,
        )
        return [self.store.turn_of[h.memory.id] for h in result.hits]

    def close(self) -> None:
        self.store.close()

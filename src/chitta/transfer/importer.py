"""Reading JSONL into a store: line by line checks, batched writes, a report of what happened."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from chitta.api import Chitta
from chitta.errors import ChittaError, ImportFormatError, InputError
from chitta.store.ids import new_id
from chitta.store.records import Alias, Episode, Memory, Triplet
from chitta.transfer.codec import (
    FORMAT,
    FORMAT_VERSION,
    LineError,
    parse_alias,
    parse_episode,
    parse_memory,
    parse_triplet,
)
from chitta.validate import check_scope_name

#: Memories embedded and written per transaction.
BATCH = 256
MAX_LINE_BYTES = 1 << 20
BOM = "\ufeff"


@dataclass(slots=True)
class ImportReport:
    """What an import did, line by line where it went wrong."""

    memories: int = 0
    episodes: int = 0
    triplets: int = 0
    aliases: int = 0
    skipped_existing: int = 0
    reembedded: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)

    @property
    def bad_lines(self) -> int:
        return len(self.errors)

    def as_dict(self) -> dict[str, Any]:
        return {
            "imported": {"memories": self.memories, "episodes": self.episodes,
                         "triplets": self.triplets, "aliases": self.aliases},
            "skipped_existing": self.skipped_existing,
            "reembedded": self.reembedded,
            "bad_lines": self.bad_lines,
            "errors": [{"line": n, "error": msg} for n, msg in self.errors],
        }  # fmt: skip


class _Importer:
    """Reads lines, validates each, and writes memories in batched transactions."""

    def __init__(self, chitta: Chitta, into: str | None) -> None:
        self.chitta = chitta
        self.store = chitta.store
        self.into = check_scope_name(into, "realm", optional=True)
        self.report = ImportReport()
        self.now = chitta.clock()
        self.dim: int | None = None  # set when the file's vectors come from the store's model
        self.id_map: dict[str, str] = {}
        self.seen: set[str] = set()
        self.pending: list[tuple[int, Memory, np.ndarray | None]] = []
        self.pending_episodes: list[tuple[int, Episode]] = []
        self.pending_triplets: list[tuple[int, Triplet]] = []
        self.pending_aliases: list[tuple[int, Alias]] = []
        self.known_episodes: set[str] = set()
        # Under --into, links to records later in the file are resolved once all are read.
        self.unresolved: list[tuple[str, str, str]] = []

    def header(self, obj: dict) -> None:
        version = obj.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ImportFormatError(
                f"export format version {version!r} is not one this chitta reads "
                f"(up to {FORMAT_VERSION})"
            )
        model = obj.get("model")
        stored = self.store.model_identity() or self.chitta.embedder.identity()
        if isinstance(model, dict) and model == stored.as_dict():
            self.dim = stored.dim

    def _new_id(self, old: str, created: int) -> str:
        if self.into is None:
            return old
        return self.id_map.setdefault(old, new_id(created))

    def _ref(self, old: str | None) -> str | None:
        """A reference as it should be stored: remapped under --into, dropped if dangling."""
        if old is None or self.into is None:
            return old
        return self.id_map.get(old)

    def line(self, number: int, obj: dict) -> None:
        kind = obj.get("type", "memory")
        if kind == "memory":
            memory, vector = parse_memory(obj, self.now, self.dim)
            self._claim(memory.id)
            if self.into is not None:
                memory = replace(memory, id=self._new_id(memory.id, memory.created_at),
                                 realm=self.into)  # fmt: skip
            self.pending.append((number, memory, vector))
        elif kind == "episode":
            episode = parse_episode(obj, self.now)
            self._claim(episode.id)
            if self.into is not None:
                episode = replace(episode, id=self._new_id(episode.id, episode.created_at),
                                  realm=self.into)  # fmt: skip
            self.pending_episodes.append((number, episode))
            self.known_episodes.add(episode.id)
        elif kind == "triplet":
            triplet = parse_triplet(obj, self.now)
            self._claim(triplet.id)
            if self.into is not None:
                triplet = replace(triplet, id=self._new_id(triplet.id, triplet.created_at),
                                  realm=self.into)  # fmt: skip
            self.pending_triplets.append((number, triplet))
        elif kind == "alias":
            alias = parse_alias(obj, self.now)
            if self.into is not None:
                alias = replace(alias, realm=self.into)
            self.pending_aliases.append((number, alias))
        elif kind == FORMAT:
            raise LineError("a second header line")
        else:
            raise LineError(
                f"unknown record type {kind!r}; expected memory, episode, triplet or alias"
            )
        pending = (self.pending, self.pending_episodes, self.pending_triplets,
                   self.pending_aliases)  # fmt: skip
        if sum(map(len, pending)) >= BATCH:
            self.flush()

    def _claim(self, record_id: str) -> None:
        if record_id in self.seen:
            raise LineError(f"id {record_id} appears twice in this file")
        self.seen.add(record_id)

    def _skip_existing(self, table: str, items: list[tuple]) -> list[tuple]:
        """``items`` (line number, record, …) without records whose id ``table`` has."""
        existing = self.store.existing_ids(table, [item[1].id for item in items])
        self.report.skipped_existing += len(existing)
        return [item for item in items if item[1].id not in existing]

    def _write(self, items: list[tuple[int, Any]], write: Callable[[list], None]) -> int:
        """Write records in one transaction; on failure one by one, so that a bad record
        costs only its own line. Returns how many were written."""
        try:
            write([record for _, record in items])
            return len(items)
        except ChittaError:
            written = 0
            for number, record in items:
                try:
                    write([record])
                    written += 1
                except ChittaError as exc:
                    self.report.errors.append((number, f"could not store: {exc}"))
            return written

    def flush(self) -> None:
        """Write what is pending: episodes, then memories (which may name them), then triplets
        (which may name memories), then aliases."""
        if self.pending_episodes:
            batch = self._skip_existing("episodes", self.pending_episodes)
            self.pending_episodes = []
            self.report.episodes += self._write(batch, self.store.add_episodes)
        if self.pending:
            # Skipped before embedding: re-importing a file should not embed it again.
            prepared = self._prepare_memories(self._skip_existing("memories", self.pending))
            self.pending = []
            vectors = {m.id: v for _, m, v in prepared}
            self.report.memories += self._write(
                [(n, m) for n, m, _ in prepared],
                lambda ms: self.store.insert([(m, vectors[m.id]) for m in ms]),
            )
            # The file holds no pieces (their vectors are the model's, made again here); a
            # memory the write refused is left by set_pieces.
            self.chitta.give_pieces([m for _, m, _ in prepared])
        if self.pending_triplets:
            batch = self._skip_existing("triplets", self.pending_triplets)
            self.pending_triplets = []
            if self.into is not None:
                batch = [(n, replace(t, source_memory=self._ref(t.source_memory)))
                         for n, t in batch]  # fmt: skip
            sources = self.store.existing_ids(
                "memories", [t.source_memory for _, t in batch if t.source_memory]
            )
            batch = [
                (n, t if t.source_memory in sources else replace(t, source_memory=None))
                for n, t in batch
            ]
            self.report.triplets += self._write(batch, self.store.add_triplets)
        if self.pending_aliases:
            batch, self.pending_aliases = self.pending_aliases, []
            for number, alias in batch:
                self._add_alias(number, alias)

    def _add_alias(self, number: int, alias: Alias) -> None:
        """Store one alias as ``alias_entity`` would (its canonical key resolved through the
        store's aliases, never an alias of itself); an alias the realm already has is kept as
        it is, as a record whose id is already there is."""
        if self.store.canonical(alias.realm, alias.alias_key) != alias.alias_key:
            self.report.skipped_existing += 1
            return
        try:
            self.chitta.relations.alias(alias.alias, alias.canonical_key, alias.realm,
                                        created_at=alias.created_at)  # fmt: skip
        except ChittaError as exc:
            self.report.errors.append((number, f"could not store: {exc}"))
            return
        self.report.aliases += 1

    def _prepare_memories(
        self, batch: list[tuple[int, Memory, np.ndarray | None]]
    ) -> list[tuple[int, Memory, np.ndarray]]:
        """Links remapped or dropped, and a vector for every memory (embedded in one call)."""
        episodes = self.known_episodes | self.store.existing_ids(
            "episodes", [m.episode_id for _, m, _ in batch if m.episode_id]
        )
        fixed = []
        for number, m, vector in batch:
            if self.into is not None:
                for name in ("supersedes", "superseded_by"):
                    old = getattr(m, name)
                    if old is not None and old not in self.id_map:
                        self.unresolved.append((m.id, name, old))
            m = replace(
                m,
                supersedes=self._ref(m.supersedes),
                superseded_by=self._ref(m.superseded_by),
                episode_id=self._ref(m.episode_id),
            )
            if m.episode_id is not None and m.episode_id not in episodes:
                m = replace(m, episode_id=None)
            fixed.append((number, m, vector))
        todo = [i for i, (_, m, v) in enumerate(fixed) if v is None]
        if todo:
            embedded = self.chitta.embedder.embed([fixed[i][1].content for i in todo])
            for j, i in enumerate(todo):
                number, m, _ = fixed[i]
                fixed[i] = (
                    number,
                    replace(m, truncated=embedded.truncated[j]),
                    embedded.vectors[j],
                )
            self.report.reembedded += len(todo)
        return fixed  # type: ignore[return-value]

    def finish(self) -> None:
        """Flush the last batch and resolve links to records that came later in the file."""
        self.flush()
        fixes: dict[str, dict[str, str]] = {}
        for memory_id, name, old in self.unresolved:
            if old in self.id_map:
                fixes.setdefault(memory_id, {})[name] = self.id_map[old]
        if fixes:
            found = self.store.get_many(list(fixes))
            self.store.update_many(replace(found[i], **f) for i, f in fixes.items() if i in found)


def import_jsonl(
    chitta: Chitta,
    lines: Iterable[str | bytes],
    *,
    into: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import JSONL ``lines``; bad lines are skipped and reported, good lines land.

    Lines read from a file come as bytes: one that is not UTF-8 is a bad line, never decoded
    with replacement characters (that would change the memory silently). A UTF-8 byte order
    mark before the first line is skipped; a line may end in CRLF.

    ``into`` moves every record into that realm under fresh ids (references between
    imported records follow). Without it, ids are kept and ids already present are skipped.
    ``progress`` is called with the number of bytes read after each line.
    """
    importer = _Importer(chitta, into)
    for number, raw in enumerate(lines, start=1):
        size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "replace"))
        if progress is not None:
            progress(size)
        try:
            if size > MAX_LINE_BYTES:
                raise LineError(f"line is longer than {MAX_LINE_BYTES:,} bytes")
            text = _decoded(raw, first=number == 1).strip()
            if not text:
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
            if not isinstance(obj, dict):
                raise LineError("a line must be a JSON object")
            if obj.get("type") == FORMAT and number == 1:
                importer.header(obj)
                continue
            importer.line(number, obj)
        except ImportFormatError:
            raise  # the whole file is unusable, not just this line
        except (LineError, InputError) as exc:
            importer.report.errors.append((number, str(exc)))
    importer.finish()
    return importer.report


def _decoded(raw: str | bytes, *, first: bool) -> str:
    """One line as text: bytes decoded as strict UTF-8 (else a :class:`LineError` naming the
    first bad byte), without the byte order mark an editor may put before the first line."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LineError(
                f"not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at byte {exc.start + 1}); "
                "the line is left out, not rewritten"
            ) from None
    return raw.removeprefix(BOM) if first else raw

"""Writing and reading a store's triplets and entity aliases, with every input checked first
(a refused call changes nothing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from chitta.config import DEFAULT_REALM
from chitta.errors import BadArgument, BadDate, BadName, MemoryNotFound, TripletNotFound
from chitta.relations.names import SELF_LOOP_PREDICATES, check_entity, check_predicate, check_weight
from chitta.store.base import Store
from chitta.store.ids import new_id
from chitta.store.records import Triplet
from chitta.store.triplets import predicate_key as key_of_predicate
from chitta.validate import check_scope_name, format_time, parse_time

#: Most triplets one find returns.
MAX_FIND = 1000


@dataclass(frozen=True, slots=True)
class Added:
    """What ``add`` did: the edge, and whether an equal current edge was already there
    (then nothing was written)."""

    triplet: Triplet
    existing: bool


@dataclass(frozen=True, slots=True)
class Invalidated:
    triplet: Triplet
    already: bool  # it was invalidated before this call; nothing changed


def triplet_to_dict(t: Triplet) -> dict[str, Any]:
    """A triplet for a reply: its export fields (times in ISO 8601, transfer/codec.py) without
    the record type, and its predicate's key."""
    from chitta.transfer import codec  # here: the transfer package imports the API

    out = codec.triplet_to_dict(t)
    del out["type"]
    out["predicate_key"] = key_of_predicate(t.predicate)
    return out


def triplet_from_dict(data: dict[str, Any]) -> Triplet:
    """A triplet from a reply (:func:`triplet_to_dict`'s inverse; ``predicate_key`` and any
    ``type`` are not the record's own and are ignored)."""

    def at(key: str) -> int | None:
        return parse_time(data[key], key)

    return Triplet(
        id=data["id"], realm=data["realm"], subject=data["subject"],
        predicate=data["predicate"], object=data["object"], weight=data["weight"],
        valid_from=at("valid_from") or 0, invalidated_at=at("invalidated_at"),
        source_memory=data["source_memory"], created_at=at("created_at") or 0,
    )  # fmt: skip


def check_realm(realm: object) -> str:
    """The realm named (``default`` when none is), or :class:`BadScope`."""
    return check_scope_name(realm or DEFAULT_REALM, "realm") or DEFAULT_REALM


def check_limit(limit: object, most: int) -> int:
    """A whole number from 1 to ``most``, or :class:`BadArgument` naming ``limit``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise BadArgument(f"limit must be a whole number from 1 to {most}, got {limit!r}")
    return limit


class Relations:
    """A store's triplets and aliases, written and read under the rules of docs/relations.md."""

    def __init__(self, store: Store, clock: Callable[[], int], realm: str = DEFAULT_REALM) -> None:
        self.store = store
        self.clock = clock
        self.realm = realm  # the realm of a call that names none

    # --- writes ----------------------------------------------------------------------------

    def add(
        self,
        subject: object,
        predicate: object,
        object_: object,
        *,
        weight: object = 1.0,
        valid_from: object = None,
        source_memory: object = None,
        realm: object = None,
    ) -> Added:
        """Store the edge ``subject —predicate→ object``; an equal current edge is returned
        instead of written twice."""
        realm_name = check_realm(realm or self.realm)
        subject_text, subject_key = check_entity(subject, "subject")
        predicate_text, predicate_key = check_predicate(predicate)
        object_text, object_key = check_entity(object_, "object")
        w = check_weight(weight)
        now = self.clock()
        start = parse_time(valid_from, "valid_from")
        with self.store.write_lock():
            # Under the lock: the source cannot be forgotten between this check and the write.
            source = self._check_source(source_memory, realm_name)
            triplet = Triplet(
                id=new_id(now), realm=realm_name, subject=subject_text, predicate=predicate_text,
                object=object_text, weight=w, valid_from=now if start is None else start,
                invalidated_at=None, source_memory=source, created_at=now,
            )  # fmt: skip
            # Every name of each end (aliases): an edge stated under an alias is the same edge.
            subjects = self.store.names_of(realm_name, subject_key)
            objects = self.store.names_of(realm_name, object_key)
            if subjects[0] == objects[0] and predicate_key not in SELF_LOOP_PREDICATES:
                raise BadName(
                    f"a {predicate_key} edge from {subject_text!r} to itself makes no sense; "
                    f"only {', '.join(sorted(SELF_LOOP_PREDICATES))} may loop (recursion)"
                )
            at = max(now, triplet.valid_from)
            existing = self.store.same_current_triplet(
                realm_name, subjects, predicate_key, objects, at
            )
            if existing is not None:
                return Added(existing, existing=True)
            self.store.add_triplets([triplet])
        return Added(triplet, existing=False)

    def invalidate(self, triplet_id: object, at: object = None) -> Invalidated:
        """Mark an edge invalid from ``at`` (default now); it stays for history."""
        if not isinstance(triplet_id, str) or not triplet_id.strip():
            raise BadArgument("id must be a triplet id (text)")
        when = parse_time(at, "at")
        with self.store.write_lock():
            found = self.store.triplet(triplet_id.strip())
            if found is None:
                raise TripletNotFound(f"no triplet {triplet_id.strip()!r}")
            if found.invalidated_at is not None:
                return Invalidated(found, already=True)
            when = self.clock() if when is None else when
            if when < found.valid_from:
                raise BadDate(
                    f"at {format_time(when)} is before the edge's valid_from "
                    f"{format_time(found.valid_from)}"
                )
            self.store.invalidate_triplet(found, when)
        return Invalidated(replace(found, invalidated_at=when), already=False)

    def alias(
        self, alias: object, canonical: object, realm: object = None, created_at: int | None = None
    ) -> tuple[str, str]:
        """Make ``alias`` name the same entity as ``canonical``; returns their keys (the
        canonical one resolved, so chains never form). ``created_at`` (default now) is for an
        import, which keeps the time the alias was made."""
        realm_name = check_realm(realm or self.realm)
        alias_text, alias_key = check_entity(alias, "alias")
        canonical_text, canonical_key = check_entity(canonical, "canonical")
        with self.store.write_lock():
            root = self.store.canonical(realm_name, canonical_key)
            if root == alias_key:
                raise BadName(
                    f"{alias_text!r} cannot be an alias of itself"
                    if canonical_key == alias_key
                    else f"{canonical_text!r} is an alias of {alias_text!r}, which would make "
                    f"{alias_text!r} an alias of itself (unalias {canonical_text!r} first to "
                    "swap the two)"
                )
            at = self.clock() if created_at is None else created_at
            self.store.add_alias(realm_name, alias_text, alias_key, root, at)
        return alias_key, root

    def unalias(self, alias: object, realm: object = None) -> bool:
        """Forget an alias; False when there was none."""
        _, key = check_entity(alias, "alias")
        return self.store.remove_alias(check_realm(realm or self.realm), key)

    # --- reads -----------------------------------------------------------------------------

    def find(
        self,
        *,
        subject: object = None,
        predicate: object = None,
        object_: object = None,
        realm: object = None,
        as_of: object = None,
        include_invalidated: bool = False,
        limit: object = 100,
    ) -> list[Triplet]:
        """Edges matching the names given (aliases resolved), newest first: those current now
        or at ``as_of``, or every one with ``include_invalidated``."""
        realm_name = check_realm(realm or self.realm)
        subjects = self._names(realm_name, subject, "subject")
        objects = self._names(realm_name, object_, "object")
        predicate_key = None if predicate is None else check_predicate(predicate)[1]
        at = parse_time(as_of, "as_of")
        if include_invalidated and at is not None:
            raise BadArgument("give as_of or include_invalidated, not both")
        at = None if include_invalidated else (self.clock() if at is None else at)
        return self.store.find_triplets(realm_name, subjects=subjects, predicate=predicate_key,
                                        objects=objects, at=at,
                                        limit=check_limit(limit, MAX_FIND))  # fmt: skip

    def aliases(self, realm: object = None) -> list[dict[str, Any]]:
        """The realm's aliases, by alias key, for a reply."""
        rows = self.store.aliases(check_realm(realm or self.realm))
        return [{"realm": a.realm, "alias": a.alias, "alias_key": a.alias_key,
                 "canonical_key": a.canonical_key, "created_at": format_time(a.created_at)}
                for a in rows]  # fmt: skip

    def _names(self, realm: str, name: object, what: str) -> tuple[str, ...]:
        if name is None:
            return ()
        return self.store.names_of(realm, check_entity(name, what)[1])

    def _check_source(self, source: object, realm: str) -> str | None:
        if source is None or source == "":
            return None
        if not isinstance(source, str):
            raise BadArgument(f"source_memory must be a memory id, got {type(source).__name__}")
        try:
            memory = self.store.get(source.strip())
        except MemoryNotFound as exc:
            raise MemoryNotFound(f"source_memory: {exc}") from None
        if memory.realm != realm:
            raise BadArgument(
                f"source_memory {memory.id} is in realm {memory.realm!r}, not {realm!r}"
            )
        return memory.id

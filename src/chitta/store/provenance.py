"""The provenance spine's vocabulary (issue 22 part 3, seed 001's ``ProvenanceSpine``): what
kind of source a memory came from, and the name of that source, read from its
:class:`~chitta.store.records.Source`. Pure functions; scoring's trust factor
(recall/scoring.py) and the replication count read them, ``chitta provenance`` shows them.

A memory's source kind, the first rule that holds:

==============  ==========================================================================
kind            when
==============  ==========================================================================
``user``        ``role`` is ``user``: the user's own words (a turn, or a fragment of one)
``assistant``   ``role`` is ``assistant``: the agent's reply, recorded by the Stop hook
``tool``        ``role`` is ``tool``: a tool's output
``distiller``   ``via`` names a distiller and no role is set: a model's summary of turns
``url``         ``url`` is set: text from the web
``file``        ``file`` is set: text about or from a file
``import``      ``via`` is ``import``: brought in from another system
``stated``      none of these: remembered on purpose (``remember`` from the CLI, MCP, API)
==============  ==========================================================================

A verbatim fragment of a turn (the model-free distiller) keeps its turn's role, so it is the
user's (or the assistant's) words; its ``via`` records that the distiller cut it out.
"""

from __future__ import annotations

from chitta.store.records import Source

#: The source kinds, from the most trusted by default to the least (recall/scoring_config.py).
SOURCE_KINDS = ("stated", "user", "import", "file", "distiller", "assistant", "tool", "url")
#: ``via`` of a memory made by a distiller starts with this.
DISTILLER = "distiller:"
#: ``via`` of a memory brought in from another system.
IMPORT = "import"


def source_kind(source: Source) -> str:
    """The kind of ``source`` (one of :data:`SOURCE_KINDS`), by the table above."""
    if source.role in ("user", "assistant", "tool"):
        return source.role
    if source.via and source.via.startswith(DISTILLER):
        return "distiller"
    if source.url:
        return "url"
    if source.file:
        return "file"
    if source.via == IMPORT:
        return "import"
    return "stated"


def source_name(source: Source) -> str | None:
    """The one source ``source`` names, as ``<kind>:<name>`` — ``url:https://…``,
    ``file:/path``, ``distiller:model/openai:NAME/prompt-1`` or ``session:ID`` — or None
    when it names none. Per-source trust is matched against it by prefix."""
    if source.url:
        return f"url:{source.url}"
    if source.file:
        return f"file:{source.file}"
    if source.via and source.via.startswith(DISTILLER) and not source.role:
        return source.via
    if source.session:
        return f"session:{source.session}"
    return None


def replication_key(source: Source) -> str | None:
    """What counts as one independent source for the replication factor: the session
    (stored as its bare id, as replications always were), else the file or the URL. A
    memory stored again from the same one is a repeated read, not a replication."""
    if source.session:
        return source.session
    if source.url:
        return f"url:{source.url}"
    if source.file:
        return f"file:{source.file}"
    return None


#: How a fragment stored before ``turns`` existed named its turn, in ``ref``.
TURN_REF = "turn:"


def drawn_from(source: Source) -> tuple[str, ...]:
    """The ids of the turns a memory was drawn from: its ``turns``, or the one turn an older
    fragment named in ``ref`` (``turn:<id>``)."""
    if source.turns:
        return source.turns
    if source.ref and source.ref.startswith(TURN_REF) and len(source.ref) > len(TURN_REF):
        return (source.ref[len(TURN_REF) :],)
    return ()

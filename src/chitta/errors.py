"""The one exception hierarchy of chitta.

Every error chitta raises on purpose is a :class:`ChittaError`. Subclasses name the cause;
the edges (CLI, later JSON-RPC and MCP) turn them into exit codes or wire errors. Each class
carries a stable ``code`` string so machines can tell causes apart without parsing messages.
"""

from __future__ import annotations


class ChittaError(Exception):
    """Base of every error chitta raises on purpose."""

    code = "error"
    exit_code = 1


# --- bad input -------------------------------------------------------------------------------


class InputError(ChittaError):
    """The caller sent something chitta cannot accept; nothing was changed."""

    code = "invalid_input"
    exit_code = 2


class ContentTooShort(InputError):
    code = "content_too_short"


class TooLarge(InputError):
    """A value over its parameter's size limit (too many characters, or a list with too many
    items); the message names the parameter, the size and the limit."""

    code = "too_large"
    #: What to do about it, said after the sizes (every edge says the same).
    hint = ""


class ContentTooLong(TooLarge):
    """A memory's content over its limit (MAX_CONTENT_CHARS)."""

    code = "content_too_long"
    hint = " — split a document into memories of one idea each"


class UnknownKind(InputError):
    code = "unknown_kind"


class BadTags(InputError):
    code = "bad_tags"


class BadDate(InputError):
    code = "bad_date"


class BadScope(InputError):
    code = "bad_scope"


class BadArgument(InputError):
    code = "bad_argument"


class BadName(InputError):
    """An entity or predicate name that is empty, too long, or not a name at all."""

    code = "bad_name"


class BadConfig(InputError):
    """A settings file (e.g. ``scoring.json``) is malformed; the message names the key."""

    code = "bad_config"


class ImportFormatError(InputError):
    """A whole import file is unusable (single bad lines are reported, not raised)."""

    code = "bad_import_file"


# --- lookups ---------------------------------------------------------------------------------


class NotFound(ChittaError):
    code = "not_found"
    exit_code = 3


class MemoryNotFound(NotFound):
    code = "memory_not_found"


class TripletNotFound(NotFound):
    code = "triplet_not_found"


class SymbolNotFound(NotFound):
    """No indexed symbol of the realm has the name or id asked for."""

    code = "symbol_not_found"


class PathNotFound(NotFound):
    """A path to index does not exist (or cannot be reached)."""

    code = "path_not_found"


class CommitNotIndexed(NotFound):
    """``recall --as-of-commit REV``: no indexed repository of the realm has an index at or
    before REV (or REV is not a commit)."""

    code = "commit_not_indexed"


class NotAFolder(InputError):
    """A path to index is not a folder (a file, a device)."""

    code = "not_a_folder"


# --- the store -------------------------------------------------------------------------------


class StoreError(ChittaError):
    code = "store_error"
    exit_code = 4


class StoreMissing(StoreError):
    code = "store_missing"


class StoreNotEmpty(StoreError):
    """The store a migration copies into holds records of its own (and merging was not
    asked for)."""

    code = "store_not_empty"


class AlreadyRunning(StoreError):
    """A chitta daemon already serves this store or answers on this socket."""

    code = "already_running"


class SocketUnusable(StoreError):
    """The daemon's socket cannot be made at its path (its folder cannot be made or written:
    a read-only file system, no permission); the message names the path and the cause."""

    code = "socket_unusable"


class DaemonUnavailable(ChittaError):
    """No daemon answers on the socket, it went away mid-request, or it is stopping."""

    code = "daemon_unavailable"
    exit_code = 4


class DaemonStarting(DaemonUnavailable):
    """A daemon was started but did not answer within the wait: it may still be loading."""

    code = "daemon_starting"


class DaemonBusy(DaemonUnavailable):
    """The daemon has no room for the request now (all its connections are taken, or too
    many reads wait for a worker); nothing was run, so trying again shortly is safe."""

    code = "daemon_busy"


class DaemonTimeout(ChittaError):
    """The daemon did not answer within its deadline; the message says whether the work
    still runs (and so whether a write will land)."""

    code = "daemon_timeout"
    exit_code = 4


class RequestTooLarge(InputError):
    """A request to the daemon is longer than one request line may be."""

    code = "request_too_large"


class InProcessOnly(ChittaError, AttributeError):
    """What only a store opened in this process offers (its ``store``, its ``embedder``),
    asked of one reached through the daemon (chitta/remote.py). An AttributeError too, so
    that ``hasattr(chitta, "store")`` tells the two kinds of Chitta apart."""

    code = "in_process_only"


class StoreLocked(StoreError):
    """Another process holds the store's instance lock."""

    code = "store_locked"

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class StoreCorrupt(StoreError):
    code = "store_corrupt"


class SchemaTooNew(StoreError):
    """The store was made by a newer chitta (a schema version this one does not know)."""

    code = "schema_too_new"


class StoreFull(StoreError):
    """The disk (or quota) holding the store has no room: the write was not made."""

    code = "store_full"


class StoreReadOnly(StoreError):
    """The store's file or folder cannot be written: reads work, writes are refused."""

    code = "store_read_only"


class AccessDenied(StoreError):
    """The database role the store was opened as may not do this: a write to a realm it has
    no write grant for, or an owner's task (a migration, the model binding); nothing was
    written."""

    code = "access_denied"


class ModelMismatch(StoreError):
    """The store's vectors were made by another embedding model."""

    code = "model_mismatch"


class StoreUnsupported(StoreError):
    """What this store's backend does not do (a SQLite backup file of a PostgreSQL store);
    the message says what does it instead."""

    code = "store_unsupported"


# --- files chitta writes --------------------------------------------------------------------


class WriteFailed(ChittaError):
    """A file chitta writes for the user (an export, a backup, a report) could not be written:
    the message names the file and the cause (a full disk, no permission). The file is as it
    was before: never a part of it that looks whole."""

    code = "write_failed"
    exit_code = 4


# --- embedding -------------------------------------------------------------------------------


class EmbedError(ChittaError):
    code = "embed_error"
    exit_code = 5


class ModelMissing(EmbedError):
    code = "model_missing"


class ModelIntegrityError(EmbedError):
    code = "model_integrity"


class EmbedBackendError(EmbedError):
    """A remote embedding endpoint failed or answered something unusable."""

    code = "embed_backend"


class CircuitOpen(EmbedBackendError):
    """The circuit breaker is open: the backend failed repeatedly and is cooling down."""

    code = "circuit_open"


class MissingExtra(ChittaError):
    """An optional dependency is not installed; the message names the extra."""

    code = "missing_extra"
    exit_code = 6

    def __init__(self, extra: str, what: str) -> None:
        super().__init__(
            f"{what} needs the '{extra}' extra: pip install 'chitta[{extra}]'"
            + (" (install torch==2.13.0 first)" if extra == "export" else "")
        )
        self.extra = extra


# --- the rerank stage ------------------------------------------------------------------------


class RerankError(ChittaError):
    """The optional cross-encoder could not be loaded or gave unusable scores.

    Recall never fails for it: the rerank stage falls back to the fused order and says why.
    """

    code = "rerank_error"
    exit_code = 5


class RerankOutputError(RerankError):
    """The cross-encoder's output is not one finite logit per query/document pair."""

    code = "rerank_output"


# --- benchmark corpora -----------------------------------------------------------------------


class CorpusUnavailable(ChittaError):
    """A benchmark's pinned corpus could not be fetched (its registry unreachable, the version
    gone, or the client missing); the message names the package and the command tried."""

    code = "corpus_unavailable"


class CorpusDrift(ChittaError):
    """A fetched corpus file's SHA-256 is not the one its truth file pins: the edges' lines
    would no longer point at the calls they describe."""

    code = "corpus_drift"


# --- errors by code --------------------------------------------------------------------------


def error_classes() -> dict[str, type[ChittaError]]:
    """Every :class:`ChittaError` subclass loaded so far, by its ``code``.

    Built from the class hierarchy, so a subclass defined in another module counts once that
    module is imported. A class counts under the code it sets itself; one that sets
    ``_by_code = False`` (the daemon client's stand-in for causes it has no class for) does
    not. Codes are unique (a test checks it); were two the same, the first met would win.
    """
    found: dict[str, type[ChittaError]] = {}
    pending: list[type[ChittaError]] = [ChittaError]
    while pending:
        cls = pending.pop(0)
        if "code" in cls.__dict__ and cls.__dict__.get("_by_code", True):
            found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def error_class(code: str) -> type[ChittaError] | None:
    """The ChittaError subclass whose ``code`` is ``code``, or None when none is loaded."""
    return error_classes().get(code)

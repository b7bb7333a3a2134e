"""Operations on the whole store: status, export and import, backups, re-embedding."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chitta.errors import BadArgument, ImportFormatError
from chitta.files import write_private
from chitta.ops.common import file_path
from chitta.ops.spec import Context, Operation, Param, Params
from chitta.validate import MAX_PATH_CHARS, MAX_SCOPE_CHARS

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.config import Settings


def _status(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta import spool
    from chitta.subconscious.worker import last_sweeps

    # The spool: writes that waited for a daemon (chitta/spool.py); 0 normally.
    queued = spool.status(chitta.spool_file, chitta.store)
    # The last upkeep sweeps as the store recorded them (a daemon adds its live figures).
    last = last_sweeps(chitta.store)
    return {"exists": True, **chitta.status(), "spool": queued, "upkeep_last": last}


def _export(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.transfer import export_jsonl

    options = {"realm": p.get("realm"), "embeddings": p.get("embeddings", False),
               "include_deleted": p.get("include_deleted", False)}  # fmt: skip
    if p.get("path") is not None:
        path = file_path(ctx, p["path"], "path")
        if path.is_dir():
            raise BadArgument(f"{path} is a folder; name a file to export to")
        # Owner-only and whole or not at all; a full disk is a WriteFailed naming the file.
        counts = write_private(path, lambda fh: export_jsonl(chitta, fh, **options))
        return {"counts": counts, "path": str(path)}
    out = io.StringIO()
    counts = export_jsonl(chitta, out, **options)
    return {"counts": counts, "jsonl": out.getvalue()}


def _import(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.transfer import import_jsonl

    text, where = p.get("jsonl"), p.get("path")
    if (text is None) == (where is None):
        raise BadArgument("import_memories needs jsonl (the text) or path (a file), not both")
    if text is not None:
        # Lines end at "\n" only: a memory may hold U+2028 and the like, which splitlines() cuts.
        report = import_jsonl(chitta, text.split("\n"), into=p.get("into"))
        return report.as_dict()
    path = file_path(ctx, where, "path")
    if not path.is_file():
        raise BadArgument(f"no file at {path}")
    total, done = path.stat().st_size, 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        ctx.report(done, total)

    try:
        # Bytes, not text: each line is decoded on its own, so that one that is not UTF-8 is
        # a bad line (the importer says so) rather than silently rewritten with U+FFFD.
        with path.open("rb") as fh:
            report = import_jsonl(chitta, fh, into=p.get("into"), progress=advance)
    except OSError as exc:
        raise ImportFormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    ctx.report(total, total)
    return report.as_dict()


def _backup(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    path = file_path(ctx, p["path"], "path")
    chitta.backup(path)
    return {"store": chitta.store.location, "path": str(path)}


def _restore_backup(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    path = file_path(ctx, p["path"], "path")
    return _restored(path, chitta.restore_backup(path))


def _restore_backup_offline(settings: Settings, p: Params, ctx: Context) -> dict[str, Any]:
    from chitta.api import restore_backup_offline

    path = file_path(ctx, p["path"], "path")
    return _restored(path, restore_backup_offline(path, settings))


def _restored(path: Path, saved: Path | None) -> dict[str, Any]:
    """The reply of a restore: the backup, where the old store's files went (None: there was
    no store) and whether they were damaged."""
    from chitta.store.backends import kept_damaged

    damaged = saved is not None and kept_damaged(saved)
    return {"path": str(path), "saved": None if saved is None else str(saved), "damaged": damaged}


def _reembed(chitta: Chitta, p: Params, ctx: Context) -> dict[str, Any]:
    count = chitta.reembed(progress=ctx.report)
    return {"reembedded": count, "model": chitta.embedder.identity().as_dict()}


PATH_HELP = "A file path (absolute when sent to the daemon)."
#: Import's JSONL text: as long as one request to the daemon may be (daemon/protocol.py
#: MAX_REQUEST_BYTES; ops is below the daemon, so it is not imported from there). Its lines
#: are checked one by one, each at most transfer/importer.py MAX_LINE_BYTES.
MAX_JSONL_CHARS = 4 * 1024 * 1024

STATUS = Operation(
    "memory_status",
    "Show the store, the model, the realm in use and what the store holds.",
    (),
    _status,
    mcp="The store, model, memories per realm, daemon.",
)
EXPORT = Operation(
    "export_memories",
    "Write memories, episodes, triplets and entity aliases as JSONL.",
    (
        Param(
            "realm",
            "text",
            "Only this realm (default: all).",
            short="-r",
            max_length=MAX_SCOPE_CHARS,
        ),
        Param(
            "embeddings", "flag", "Include vectors (base64 float32).", default=False, mcp=False
        ),  # kilobytes of base64 per memory: not for a model's context
        Param("include_deleted", "flag", "Include forgotten memories.", default=False, mcp=False),
        Param(
            "path",
            "text",
            "Write to this file (owner-only) instead of returning the text.",
            flag="--output",
            short="-o",
            mcp=False,
            max_length=MAX_PATH_CHARS,
        ),
    ),  # fmt: skip
    _export,
    mcp="The store as JSONL text (jsonl), with counts.",
)
IMPORT = Operation(
    "import_memories",
    "Read a JSONL export (PATH, or - for stdin); bad lines are reported and skipped.",
    (
        Param(
            "jsonl",
            "text",
            "JSONL, as export_memories gives it.",
            cli=False,
            max_length=MAX_JSONL_CHARS,
        ),
        Param(
            "path",
            "text",
            "The file to read. " + PATH_HELP,
            positional=True,
            mcp=False,
            max_length=MAX_PATH_CHARS,
        ),
        Param(
            "into",
            "text",
            "Into this realm, under new ids.",
            short="-r",
            aliases=("--realm",),
            max_length=MAX_SCOPE_CHARS,
        ),
    ),  # fmt: skip
    _import,
    writes=True,
    long=True,
    creates=True,
    effect="write",
    mcp="Import JSONL text; bad lines are reported and skipped.",
)
BACKUP = Operation(
    "backup",
    "Copy the live store to PATH (SQLite online backup).",
    (
        Param(
            "path",
            "text",
            "Where the copy goes. " + PATH_HELP,
            required=True,
            positional=True,
            max_length=MAX_PATH_CHARS,
        ),
    ),  # fmt: skip
    _backup,
)
RESTORE_BACKUP = Operation(
    "restore_backup",
    "Replace the store with the backup at PATH, also a damaged store (the backup is checked; "
    "the old store is kept beside it).",
    (
        Param(
            "path",
            "text",
            "The backup to restore. " + PATH_HELP,
            required=True,
            positional=True,
            max_length=MAX_PATH_CHARS,
        ),
    ),  # fmt: skip
    _restore_backup,
    writes=True,
    long=True,
    offline=_restore_backup_offline,
)
REEMBED = Operation(
    "reembed",
    "Re-embed every memory, and each one's sentences, with the configured model (after "
    "changing models).",
    (),
    _reembed,
    writes=True,
    long=True,
)

OPERATIONS = (STATUS, EXPORT, IMPORT, BACKUP, RESTORE_BACKUP, REEMBED)

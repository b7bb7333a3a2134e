"""The spool: writes that could not reach the daemon in time, kept on disk until it takes them in.

A hook (the Stop hook's episode) or the MCP server (a ``remember``) that finds no daemon able
to answer appends the request to ``$CHITTA_HOME/spool/<store>.jsonl``: one JSON line per
record, ``{"id", "op", "params", "spooled_at"}``, where ``params`` are the operation's exact
parameters (content, kind, realm, session, and ``event_time``: when it happened). The folder
is 0700 and the file 0600; each append is one ``write`` under an exclusive ``flock``,
``fsync``'d before the writer reports success.

The daemon takes the spool in when it starts, and whenever a spool appears while it runs:

1. **Claim.** Under the same lock, the spool is renamed to ``<store>.intake-<ns>.jsonl``.
   A writer that opened the old name waits on the lock, then sees that its file is no
   longer the spool (another inode) and appends to a new one: a claimed file never grows.
2. **Apply, in order.** Every claimed file (a crashed intake's first, oldest first) is read
   line by line; each record runs as its operation. After each line the store's meta table
   remembers ``(file, lines done)`` (``spool.progress:<file>``, a key per claimed file: the
   daemons of many homes on one database take their spools in side by side), so an intake
   killed mid-file starts again after the last line it finished: nothing is skipped and
   nothing done is redone.
3. **Forget the file** once its last line is done (and its progress key), and record the
   counts (``spool.last``).

Why this cannot duplicate: the only window is a kill between a record's own commit and the
progress commit after it (the store's transactions do not nest, so the two cannot be one).
The record is then applied a second time, and the store's near-duplicate rule folds identical
content in the same scope into the memory already there (``deduplicated``: one row, reinforced
once). The same rule covers a record spooled after a request that was sent but not answered
in time (the daemon may still have done it): the writers spool those too, so that a daemon
killed before it got to the request loses nothing.

A line that is not a record (torn, edited, not JSON) is skipped and counted; a record the
operation refuses as bad input is skipped and counted; any other failure stops the intake
and leaves the rest for the next one. Logs carry counts, never memory text.

Standard library only: the hooks import this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from chitta import files
from chitta.store import faults  # standard library only, like this module

log = logging.getLogger(__name__)

SPOOL_DIR = "spool"
#: The operations a record may name: writes whose reply the writer can do without.
#: (``code_reindex``: the PostToolUse hook's re-index of an edited file, idempotent.)
SPOOLABLE = frozenset({"remember", "code_reindex"})
#: Meta keys in the store: the intake's place in a claimed file (``spool.progress:<file>``;
#: a store written by an older chitta may hold the one key of its day, read as a fallback),
#: and the last intake's counts.
PROGRESS_KEY = "spool.progress"
LAST_KEY = "spool.last"
_INTAKE_INFIX = ".intake-"


class Meta(Protocol):
    """What the intake needs of a store: its meta table."""

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def delete_meta(self, key: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Intake:
    """What one intake did: records applied, lines skipped as corrupt, records refused."""

    taken: int = 0
    corrupt: int = 0
    refused: int = 0
    files: int = 0
    finished_at: str = ""
    complete: bool = True  # False: a failure stopped it; the rest waits for the next intake

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def spool_path(store_path: Path) -> Path:
    """The spool of the SQLite store at ``store_path`` (``<home>/spool/<store>.jsonl``)."""
    return spool_file(store_path.parent, store_path.stem)


def spool_file(data_dir: Path, key: str) -> Path:
    """The spool of the store named ``key`` (store/backends.py ``location_key``) whose files
    live in ``data_dir`` (``Store.data_dir``): ``<data_dir>/spool/<key>.jsonl``."""
    return data_dir / SPOOL_DIR / f"{key}.jsonl"


def now_iso(offset_ms: int = 0) -> str:
    """Now (moved by ``offset_ms``, CHITTA_CLOCK_OFFSET_MS) as ISO 8601 UTC with
    milliseconds (what a record's ``event_time`` holds)."""
    return (datetime.now(UTC) + timedelta(milliseconds=offset_ms)).isoformat(
        timespec="milliseconds"
    )


def new_record_id() -> str:
    # Unique across processes (pid and randomness); sorts by the time it was made.
    return f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


def _folder(path: Path) -> Path:
    folder = files.private_dir(path.parent)
    os.chmod(folder, 0o700)  # the spool's own folder: owner-only even if it was there looser
    return folder


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _disk_errors(write: Callable[..., str]) -> Callable[..., str]:
    """A full disk or a read-only folder under the spool raised as StoreFull or StoreReadOnly
    naming the spool, as the store's own writes are (store/faults.py)."""

    @functools.wraps(write)
    def mapped(path: Path, *args: Any) -> str:
        with faults.mapped(path, "keeping the write in the spool", "the spool", reads=False):
            return write(path, *args)

    return mapped


@_disk_errors
def append(path: Path, op: str, params: Mapping[str, Any]) -> str:
    """Append one record (``op`` with ``params``) to the spool at ``path``, durably; its id."""
    if op not in SPOOLABLE:
        raise ValueError(f"{op} cannot be spooled")
    record = {"id": new_record_id(), "op": op, "params": dict(params), "spooled_at": now_iso()}
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    folder = _folder(path)
    while True:
        created = not path.exists()
        fd = files.open_private(path, os.O_WRONLY | os.O_APPEND)  # 0600, also if it was not
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _same_file(fd, path):
                continue  # claimed by an intake between open and lock: append to a new spool
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            files.sync_folder(folder)  # the new name is as durable as its contents
        return record["id"]


def waiting(path: Path, meta: Meta | None = None) -> int:
    """How many records wait in the spool at ``path`` and in claimed files (less the lines
    an interrupted intake finished, when ``meta`` says which)."""
    count = 0
    for file in [path, *claimed(path)]:
        with contextlib.suppress(FileNotFoundError), file.open("rb") as fh:
            lines = list(fh)
            skip = lines_done(meta, file.name) if meta is not None else 0
            count += sum(1 for line in lines[skip:] if line.strip())
    return count


def progress_key(file_name: str) -> str:
    """The meta key that holds how far the intake of the claimed file ``file_name`` got."""
    return f"{PROGRESS_KEY}:{file_name}"


def lines_done(meta: Meta, file_name: str) -> int:
    """Lines of the claimed file ``file_name`` an earlier intake finished."""
    name, done = _progress(meta.meta(progress_key(file_name)) or meta.meta(PROGRESS_KEY))
    return done if name == file_name else 0


def claimed(path: Path) -> list[Path]:
    """Claimed files of ``path``'s spool, oldest first (their names sort by time)."""
    if not path.parent.is_dir():
        return []
    return sorted(path.parent.glob(f"{path.stem}{_INTAKE_INFIX}*.jsonl"))


def claim(path: Path) -> Path | None:
    """Rename the spool to a claimed file of its own (under the writers' lock); None if
    there is no spool."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not _same_file(fd, path):
            return None  # another intake claimed it first
        target = path.with_name(f"{path.stem}{_INTAKE_INFIX}{time.time_ns():020d}.jsonl")
        os.rename(path, target)
        files.sync_folder(path.parent)
        return target
    finally:
        os.close(fd)


def _lines(file: Path) -> Iterator[bytes]:
    with file.open("rb") as fh:
        yield from fh


def _record(line: bytes) -> dict[str, Any] | None:
    """The record on ``line``, or None when the line is not one."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("op") not in SPOOLABLE:
        return None
    if not isinstance(record.get("id"), str) or not isinstance(record.get("params"), dict):
        return None
    return record


Apply = Callable[[str, dict[str, Any]], None]


def take_in(
    path: Path,
    apply: Apply,
    meta: Meta,
    *,
    refused: tuple[type[BaseException], ...] = (),
    stopping: Callable[[], bool] = lambda: False,
) -> Intake | None:
    """Take in the spool at ``path``: each record once, in order, through ``apply(op,
    params)``; None when nothing was waiting. A record ``apply`` refuses with one of
    ``refused`` is counted and skipped; any other exception stops the intake (the rest waits).
    """
    claim(path)
    waiting = claimed(path)
    if not waiting:
        return None
    counts = {"taken": 0, "corrupt": 0, "refused": 0, "files": 0}
    complete = True
    try:
        for file in waiting:
            if not _take_file(file, apply, meta, refused, stopping, counts):
                complete = False
                break
            file.unlink()
            files.sync_folder(file.parent)
            counts["files"] += 1
            with contextlib.suppress(Exception):  # a key left behind is only a key
                meta.delete_meta(progress_key(file.name))
    except Exception:
        complete = False
        log.exception("the spool intake stopped; what is left waits for the next one")
    result = Intake(**counts, finished_at=now_iso(), complete=complete)
    with contextlib.suppress(Exception):
        meta.set_meta(LAST_KEY, json.dumps(result.as_dict()))
    log.info("spool intake: %d taken, %d corrupt lines skipped, %d refused, %d files%s",
             result.taken, result.corrupt, result.refused, result.files,
             "" if complete else " (stopped; the rest waits)")  # fmt: skip
    return result


def _take_file(
    file: Path,
    apply: Apply,
    meta: Meta,
    refused: tuple[type[BaseException], ...],
    stopping: Callable[[], bool],
    counts: dict[str, int],
) -> bool:
    """Apply ``file``'s records after those a previous intake finished; False if stopped."""
    start = lines_done(meta, file.name)
    for number, line in enumerate(_lines(file)):
        if number < start:
            continue
        if stopping():
            return False
        if line.strip():
            record = _record(line)
            if record is None:
                counts["corrupt"] += 1
            else:
                try:
                    apply(record["op"], record["params"])
                    counts["taken"] += 1
                except refused:
                    counts["refused"] += 1
        meta.set_meta(progress_key(file.name), json.dumps([file.name, number + 1]))
    return True


def _progress(raw: str | None) -> tuple[str, int]:
    try:
        name, done = json.loads(raw) if raw else ("", 0)
        return str(name), int(done)
    except (ValueError, TypeError):
        return "", 0


def last_intake(meta: Meta) -> dict[str, Any] | None:
    """The counts and time of the last intake that did anything, from the store's meta."""
    raw = meta.meta(LAST_KEY)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def status(path: Path, meta: Meta) -> dict[str, Any]:
    """What ``chitta status`` shows of the spool: its path, records waiting, last intake."""
    return {"path": str(path), "waiting": waiting(path, meta), "last_intake": last_intake(meta)}

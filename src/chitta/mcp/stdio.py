"""chitta's stdio transport for its MCP server: newline-delimited JSON-RPC, read as bytes.

It stands in for the SDK's ``mcp.server.stdio.stdio_server``, whose reader decodes stdin with
``errors="replace"`` (bytes that are not UTF-8 reached a tool as U+FFFD) and drops, without an
answer, a line its model cannot read. Here stdin is read a line at a time as bytes, at most
:data:`MAX_REQUEST_BYTES` of a line (the rest of a longer one is read past, never kept), and
each line is read by mcp/lines.py: a message goes to the SDK's session as the SDK's own
transport sends it (a ``SessionMessage``); a refused request is answered here with its
JSON-RPC error. Replies are written as the SDK writes them: one compact JSON message a line,
UTF-8. As with the SDK's transport, while it serves, fd 0 reads the null device and fd 1
writes to stderr, so a child process or a library that prints cannot break a message.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError, JSONRPCMessage
from pydantic_core import PydanticSerializationError

from chitta.daemon.protocol import MAX_REQUEST_BYTES
from chitta.mcp import lines

log = logging.getLogger(__name__)

#: How much of an over-long line is read at a time while it is passed over, in bytes.
SKIP_BYTES = 64 * 1024

Incoming = SessionMessage | Exception
ReadStreams = tuple[MemoryObjectReceiveStream[Incoming], MemoryObjectSendStream[SessionMessage]]


@dataclass(frozen=True, slots=True)
class _Overlong:
    """A line longer than the limit: the part of it that was read (for its id)."""

    head: bytes


@contextlib.asynccontextmanager
async def stdio_streams(
    stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> AsyncIterator[ReadStreams]:
    """The SDK session's read and write streams over ``stdin`` and ``stdout`` (binary), by
    default the process's own (claimed for the protocol while the block runs)."""
    with contextlib.ExitStack() as stack:
        if stdin is None or stdout is None:
            stdin, stdout = stack.enter_context(claim_stdio())
        to_session, from_client = anyio.create_memory_object_stream[Incoming](0)
        to_client, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        reading = anyio.CancelScope()

        async def read() -> None:
            with reading:
                await _read(stdin, to_session, to_client.clone())

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(_write, stdout, from_session, tg.cancel_scope)
            yield from_client, to_client
            # Served: a reader still waiting on stdin is let go; the writer ends once every
            # reply is written (when the session and the reader have closed their ends).
            reading.cancel()
            to_client.close()


async def _read(stdin: BinaryIO, to_session: MemoryObjectSendStream[Incoming],
                to_client: MemoryObjectSendStream[SessionMessage]) -> None:  # fmt: skip
    """Read stdin to its end: each message to the session, each refusal answered."""
    async with to_session, to_client:
        while True:
            line = await anyio.to_thread.run_sync(next_line, stdin, abandon_on_cancel=True)
            if line is None:
                return
            read = lines.too_long(line.head) if isinstance(line, _Overlong) else lines.read(line)
            try:
                if isinstance(read, lines.Refused):
                    await _refuse(read, to_session, to_client)
                elif read is not None:
                    await to_session.send(SessionMessage(read))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the session is over


async def _refuse(refused: lines.Refused, to_session: MemoryObjectSendStream[Incoming],
                  to_client: MemoryObjectSendStream[SessionMessage]) -> None:  # fmt: skip
    log.warning("refused a %s from the client (id %r): %s", refused.kind, refused.id,
                refused.message)  # fmt: skip
    if refused.kind == "notification":
        return  # nobody waits for an answer
    error = JSONRPCError(jsonrpc="2.0", id=refused.id,
                         error=ErrorData(code=refused.code, message=refused.message,
                                         data=refused.data()))  # fmt: skip
    if refused.kind == "response":
        await to_session.send(SessionMessage(error))  # what waits for it ends, with the error
    else:
        await to_client.send(SessionMessage(error))


def next_line(stream: BinaryIO, limit: int = MAX_REQUEST_BYTES) -> bytes | _Overlong | None:
    """The next line of ``stream`` (with its newline), an over-long one's head, or None at
    the end; an over-long line is read to its end but not kept."""
    line = stream.readline(limit)
    if not line:
        return None
    if line.endswith(b"\n") or len(line) < limit:
        return line
    while True:
        rest = stream.readline(SKIP_BYTES)
        if not rest or rest.endswith(b"\n"):
            return _Overlong(line)


async def _write(stdout: BinaryIO, from_session: MemoryObjectReceiveStream[SessionMessage],
                 scope: anyio.CancelScope) -> None:  # fmt: skip
    """Write each message the session sends as one line; when stdout fails (the client went
    away), stop serving."""
    async with from_session:
        async for item in from_session:
            data = _encoded(item.message)
            if data is None:
                continue
            try:
                await anyio.to_thread.run_sync(_put, stdout, data)
            except OSError as exc:
                log.info("stdout cannot be written (%s): the MCP session ends", exc)
                scope.cancel()
                return


def _put(stdout: BinaryIO, data: bytes) -> None:
    stdout.write(data)
    stdout.flush()


def _encoded(message: JSONRPCMessage) -> bytes | None:
    """``message`` as the SDK writes it; a reply that cannot be UTF-8 JSON becomes an error
    with its id (the request is answered), any other such message is left out."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        rid = getattr(message, "id", None)
        if rid is None or not hasattr(message, "result") and not hasattr(message, "error"):
            log.error("a message to the client could not be encoded; left out")
            return None
        error = ErrorData(code=INTERNAL_ERROR, message="the reply could not be encoded as "
                          "UTF-8 JSON (it holds a lone surrogate)")  # fmt: skip
        text = JSONRPCError(jsonrpc="2.0", id=rid, error=error).model_dump_json(
            by_alias=True, exclude_unset=True
        )
    return (text + "\n").encode("utf-8")


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Private duplicates of fds 0 and 1 for the protocol; meanwhile fd 0 reads the null
    device and fd 1 writes to stderr (left as they are where that cannot be done)."""
    sys.stdout.flush()
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    diverted = [fd for fd, divert in ((0, _null_in), (1, lambda: os.dup(2))) if _divert(fd, divert)]
    try:
        # closefd=False: a reader thread may still wait on the descriptor when the session
        # ends, so it is never closed (and reused) under it; the process ends soon after.
        yield (os.fdopen(wire_in, "rb", closefd=False),
               os.fdopen(wire_out, "wb", closefd=False))  # fmt: skip
    finally:
        for fd in diverted:
            with contextlib.suppress(OSError):
                os.dup2(wire_in if fd == 0 else wire_out, fd)


def _null_in() -> int:
    return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)


def _divert(fd: int, opener: Callable[[], int]) -> bool:
    """Point ``fd`` where ``opener``'s new descriptor points; whether that was done."""
    try:
        other = opener()
    except OSError:
        return False
    try:
        os.dup2(other, fd)
    except OSError:
        return False
    finally:
        os.close(other)
    return True

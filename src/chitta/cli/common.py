"""What every command shares at the CLI's edge: settings, the daemon or the store, and the
one way errors become a message and an exit code."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from chitta.config import Settings, load_settings
from chitta.errors import ChittaError, StoreLocked, WriteFailed


def emit(data: dict[str, Any]) -> None:
    click.echo(json.dumps({"ok": True, **data}, ensure_ascii=False, indent=None))


class OutputFailed(WriteFailed):
    """Standard output could not take the reply (a full disk behind ``>``, a closed pipe):
    said on stderr, as stdout cannot carry it. Its code is ``write_failed``."""

    _by_code = False  # not a cause of its own: the code finds WriteFailed


class _Stdout(io.FileIO):
    """Descriptor 1 as the process's stdout is written: a write that fails raises
    :class:`OutputFailed`, and what is written after goes to the null device."""

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except BlockingIOError:
            raise  # a non-blocking stdout that is full for now: the buffer retries
        except OSError as exc:
            _discard_stdout()
            raise OutputFailed(f"cannot write to standard output: {exc.strerror or exc}") from None


def guard_stdout() -> None:
    """Make a failed write to this process's stdout (a full disk behind ``>``, a reader that
    went away) an :class:`OutputFailed` wherever it happens: rich, click's help, ``print``.
    Only the process's own stdout is replaced (not one a test or a runner put there)."""
    current = sys.stdout
    if current is None or current is not sys.__stdout__:
        return
    try:
        fd = current.fileno()
        current.flush()
    except (OSError, ValueError, io.UnsupportedOperation):
        return  # unusable already: left as it is
    buffered = io.BufferedWriter(_Stdout(fd, "wb", closefd=False))
    sys.stdout = io.TextIOWrapper(buffered, encoding=current.encoding, errors=current.errors,
                                  line_buffering=current.line_buffering)  # fmt: skip


def _discard_stdout() -> None:
    """Point descriptor 1 at the null device: what is still buffered goes nowhere (not into
    a second error when Python flushes stdout on the way out)."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextmanager
def output() -> Iterator[None]:
    """Printing a reply: an OSError on stdout becomes an :class:`OutputFailed`, not a
    traceback (nor a second one when Python flushes stdout on the way out)."""
    try:
        yield
        sys.stdout.flush()
    except OSError as exc:
        _discard_stdout()
        raise OutputFailed(f"cannot write to standard output: {exc.strerror or exc}") from None


def fail(exc: ChittaError, as_json: bool) -> None:
    if as_json and not isinstance(exc, OutputFailed):
        click.echo(json.dumps({"ok": False, "error": exc.code, "message": str(exc)}))
    else:
        click.echo(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


@contextmanager
def errors(as_json: bool = False) -> Iterator[None]:
    """Turn chitta's errors into a message and an exit code at this edge."""
    try:
        yield
    except ChittaError as exc:
        fail(exc, as_json)


def settings_of(ctx: click.Context) -> Settings:
    return ctx.find_object(Settings) or load_settings()


def daemon_client(ctx: click.Context, *, long: bool = False):
    """A client of this store's daemon when one answers on its socket, else None (the
    command then opens the store in-process). ``long``: wait for the reply as long as it
    takes (the daemon does not cut long work; it reports progress)."""
    from chitta.daemon.client import DaemonClient, daemon_answers

    path = settings_of(ctx).socket_path
    if not daemon_answers(path):
        return None
    return DaemonClient(path, timeout_s=None if long else DAEMON_WAIT_S)


#: How long a command waits for the daemon's reply. The daemon answers by its own deadline
#: (``chitta serve --deadline``, 30 s by default) at the latest, so this only guards against
#: a daemon that hangs; it is long so that a raised deadline is not cut short here.
DAEMON_WAIT_S = 600.0


@contextmanager
def open_store(ctx: click.Context, *, create: bool = True, check_model: bool = True):
    """The store opened in this process (no daemon serves it)."""
    from chitta.api import Chitta

    settings = settings_of(ctx)
    try:
        chitta = Chitta.open(settings, create=create, check_model=check_model, through_daemon=False)
    except StoreLocked as exc:
        from chitta.daemon.client import daemon_answers

        if daemon_answers(settings.socket_path):
            # A daemon came up between the probe and the open: the next run goes through it.
            raise StoreLocked(
                f"the chitta daemon (pid {exc.pid}) started serving this store just now; "
                "run the command again",
                pid=exc.pid,
            ) from None
        raise
    try:
        yield chitta
    finally:
        chitta.close()

"""Start `chitta serve` in the background when no daemon answers (for `chitta mcp`, later hooks).

The daemon is a detached process (its own session, stdin closed, output appended to
``$CHITTA_HOME/chitta-serve.log``, mode 0600), so it outlives the client that started it and
never writes on that client's stdout. It stops by itself after ``CHITTA_DAEMON_IDLE_S``
seconds without a request (Settings.daemon_idle_s; 0 keeps it). Two clients racing to start
it are safe: the store lock lets one daemon win, the other ``chitta serve`` exits with
"already running", and both clients then wait for the winner's socket.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from chitta import files
from chitta.config import Settings
from chitta.daemon.client import daemon_answers
from chitta.errors import DaemonStarting, DaemonUnavailable

#: How long a client waits for a daemon it started to answer, in seconds (the model loads first).
START_TIMEOUT_S = 60.0
LOG_NAME = "chitta-serve.log"
# What a losing `chitta serve` says when another daemon holds the store or the socket
# (errors.AlreadyRunning's messages): the client then waits for the winner.
_ALREADY = ("already running", "already answers")
_POLL_S = 0.1


def log_path(settings: Settings) -> Path:
    return settings.home / LOG_NAME


def spawn_daemon(settings: Settings) -> tuple[subprocess.Popen, int]:
    """Start a detached ``chitta serve`` for ``settings``' store; the process and the log
    offset its output starts at."""
    files.private_dir(settings.home)
    log = log_path(settings)
    fd = files.open_private(log, os.O_WRONLY | os.O_APPEND)  # 0600, an older log's bits too
    try:
        offset = os.lseek(fd, 0, os.SEEK_END)
        proc = subprocess.Popen(
            _command(settings), stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
            env=_environment(settings), start_new_session=True, close_fds=True,
        )  # fmt: skip
    finally:
        os.close(fd)
    return proc, offset


def _command(settings: Settings) -> list[str]:
    # The home and store may come from options rather than the environment: pass them on.
    # Nobody asked for this daemon by hand, so it goes away once unused (0: it stays).
    # A database URL may carry a password: it goes in the environment, not the command line
    # that `ps` shows everyone (_environment).
    store = [] if settings.store_is_database else ["--store", settings.store]
    return [sys.executable, "-m", "chitta", "--home", str(settings.home), *store,
            "serve", "--idle-exit", str(settings.daemon_idle_s)]  # fmt: skip


def _environment(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    if settings.socket is not None:
        env["CHITTA_SOCKET_PATH"] = str(settings.socket)
    if settings.store_is_database:
        env["CHITTA_STORE"] = settings.store
    if settings.clock_offset_ms:  # the clock the caller keeps, whichever way it was set
        env["CHITTA_CLOCK_OFFSET_MS"] = str(settings.clock_offset_ms)
    if not settings.distill:  # the caller's choice, whichever way it was set
        env["CHITTA_DISTILL"] = "0"
    return env


def wait_for_daemon(
    settings: Settings, proc: subprocess.Popen, offset: int, *, timeout_s: float = START_TIMEOUT_S
) -> None:
    """Return once a daemon answers on the socket; :class:`DaemonUnavailable` saying why not
    (:class:`DaemonStarting` when the wait ran out while it may still be starting)."""
    path = settings.socket_path
    deadline = time.monotonic() + timeout_s
    lost_race = False
    while time.monotonic() < deadline:
        if daemon_answers(path):
            return
        code = proc.poll()
        if code is not None and not lost_race:
            said = _log_since(settings, offset)
            if not any(marker in said for marker in _ALREADY):
                last = said.strip().splitlines()[-1:] or ["(no output)"]
                raise DaemonUnavailable(
                    f"chitta serve exited with code {code}: {last[0]} (see {log_path(settings)})"
                )
            lost_race = True  # another daemon is starting: wait for its socket
        time.sleep(_POLL_S)
    raise DaemonStarting(
        f"no chitta daemon answered on {path} within {timeout_s:g} s (see {log_path(settings)})"
    )


def ensure_daemon(settings: Settings, *, timeout_s: float = START_TIMEOUT_S) -> Path:
    """The socket of a daemon serving ``settings``' store, starting one if none answers."""
    if not daemon_answers(settings.socket_path):
        proc, offset = spawn_daemon(settings)
        wait_for_daemon(settings, proc, offset, timeout_s=timeout_s)
    return settings.socket_path


def _log_since(settings: Settings, offset: int) -> str:
    try:
        with log_path(settings).open("rb") as fh:
            fh.seek(offset)
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""

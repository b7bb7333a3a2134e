"""A `chitta serve` process to do harm to: started with a file-descriptor limit, watched through
/proc (resident memory, threads, open files), killed with SIGKILL, restarted.

Used by `chitta bench soak` and by the fault-injection tests (tests/fault/). Only the process
and its figures are looked at, never what the store holds.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from chitta.config import Settings
from chitta.daemon.client import daemon_answers

#: How long a daemon may take to answer on its socket after it starts, in seconds.
START_TIMEOUT_S = 60.0
_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class ProcFigures:
    """What /proc says about one process at one moment."""

    rss_kb: int
    peak_rss_kb: int
    threads: int
    open_fds: int


def proc_figures(pid: int) -> ProcFigures | None:
    """The figures of process ``pid`` (None when it is gone)."""
    fields: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM", "Threads"):
                fields[name] = int(value.split()[0])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError, IndexError):
        return None
    if "VmRSS" not in fields:  # a zombie has no memory lines
        return None
    return ProcFigures(fields["VmRSS"], fields.get("VmHWM", 0), fields.get("Threads", 0), fds)


def serve_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without chitta's own settings, with ``CHITTA_HOME``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(home), **(extra or {})}


class Served:
    """One `chitta serve` process over the default store of ``home``."""

    def __init__(
        self,
        home: Path,
        *args: str,
        nofile: int | None = None,
        log: Path | None = None,
        env: dict[str, str] | None = None,
        socket: Path | None = None,
    ) -> None:
        self.home = Path(home)
        self.args = args
        self.nofile = nofile
        self.env = env or {}
        self.socket = socket or Settings(home=self.home).socket_path
        if socket is not None:
            self.env = {**self.env, "CHITTA_SOCKET_PATH": str(socket)}
        self.log = log or self.home.parent / f"{self.home.name}-serve.log"
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise RuntimeError("the daemon was never started")
        return self.proc.pid

    def start(self, timeout_s: float = START_TIMEOUT_S) -> Served:
        """Start the daemon and return once it answers on its socket."""
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "chitta", "serve", *self.args],
                env=serve_environment(self.home, self.env), stdin=subprocess.DEVNULL,
                stdout=fd, stderr=fd, close_fds=True,
            )  # fmt: skip
        finally:
            os.close(fd)
        if self.nofile is not None:
            # Set from outside rather than in a preexec_fn, which is not safe to run while
            # other threads (the soak's clients) hold locks; Python has not opened its files
            # yet when this lands, long before the daemon listens.
            limit = (self.nofile, self.nofile)
            resource.prlimit(self.proc.pid, resource.RLIMIT_NOFILE, limit)
        self.wait_answering(timeout_s)
        return self

    def wait_answering(self, timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"chitta serve exited with {self.returncode()}: {self.said()}")
            if daemon_answers(self.socket):
                return
            time.sleep(_POLL_S)
        self.kill9()
        raise RuntimeError(f"chitta serve did not answer within {timeout_s:g} s: {self.said()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def figures(self) -> ProcFigures | None:
        return proc_figures(self.pid) if self.alive() else None

    def said(self, tail: int = 2000) -> str:
        """The end of the daemon's output (its log lines, a traceback if it crashed)."""
        try:
            return self.log.read_bytes()[-tail:].decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def kill9(self) -> None:
        """SIGKILL, as a crash or the OOM killer would: no cleanup, the socket file stays."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self, timeout_s: float = 60.0) -> int | None:
        """SIGTERM and wait (SIGKILL after ``timeout_s``); the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.kill9()
        return self.proc.returncode

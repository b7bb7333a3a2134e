"""`chitta bench agent-day`: LongMemEval-S lived as an agent lives it, through the real hooks.

For each question, a realm of its own on a real daemon (one temporary home): its haystack
sessions in date order, each a Claude Code session — ``chitta hook session-start``, then per
user turn ``chitta hook prompt`` with the turn as the prompt and, once the assistant's reply
is in the session's JSONL transcript (written as Claude Code writes it, with the haystack
date as each line's ``timestamp``), ``chitta hook stop`` — and last the question as a new
session's first prompt. Every hook is a new process with its event on stdin, timed from
spawn to exit. The figures are what the model would have been given: whether the question's
context holds a gold turn, its size, repeats and self-echo within a session.

Each question lives at its own date: its daemon and its hooks run with CHITTA_CLOCK_OFFSET_MS
set so that "now" is the question's date (see :data:`CLOCK_NOTE`).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chitta.bench.agent_day_data import Pair, Question, Session
from chitta.bench.agent_day_output import Ledger, parse_hook_output, recorded_ids
from chitta.bench.scale.measure import clean_env
from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.daemon.launch import spawn_daemon, wait_for_daemon
from chitta.store.provenance import drawn_from
from chitta.store.records import Source

CLOCK_NOTE = (
    "Each question runs on a daemon, and its hooks, with CHITTA_CLOCK_OFFSET_MS set so that "
    "'now' is the question's question_date (plus the seconds its replay takes): the store "
    "records its memories as made then, ages and recency are told from then. The haystack "
    "sessions' own dates are the transcript lines' timestamps (Claude Code writes one per "
    "line), which the Stop hook records as each episode's event_time."
)
HOOK_TIMEOUT_S = 120.0
START_TIMEOUT_S = 300.0


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


@dataclass(slots=True)
class Tally:
    """Everything measured over the run, kept as raw lists until the end."""

    hook_ms: dict[str, list[float]] = field(default_factory=dict)
    prompt_tokens: list[float] = field(default_factory=list)
    session_tokens: list[float] = field(default_factory=list)
    start_tokens: list[float] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    unrecorded: int = 0  # stop hooks that named no memory id


class Replay:
    """Drives the hooks as Claude Code would, for one daemon home."""

    def __init__(self, home: Path, workdir: Path, tally: Tally) -> None:
        self.home, self.workdir, self.tally = home, workdir, tally
        self.socket = Settings(home=home).socket_path
        self.env = clean_env() | {"CHITTA_HOME": str(home)}

    def hook(self, name: str, event: dict[str, Any], realm: str) -> tuple[str, str]:
        """Run ``chitta hook NAME`` with ``event`` on stdin; its stdout and stderr."""
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "chitta", "hook", name],
                              input=json.dumps(event), capture_output=True, text=True,
                              env=self.env | {"CHITTA_REALM": realm},
                              timeout=HOOK_TIMEOUT_S)  # fmt: skip
        self.tally.hook_ms.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        return done.stdout, done.stderr

    def session(self, q: Question, sid: str, pairs: tuple[Pair, ...], start_ms: int,
                ledger: Ledger, counts: dict[str, int]) -> list[str]:  # fmt: skip
        """One Claude Code session; the refs its last prompt injected."""
        realm = f"lme-{q.id}"
        transcript = self.workdir / f"{sid}.jsonl"
        base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(self.workdir)}
        start = {**base, "hook_event_name": "SessionStart", "source": "startup"}
        out = parse_hook_output(self.hook("session-start", start, realm)[0])
        self._count(ledger, sid, ledger.injected(out), counts)
        self.tally.start_tokens.append(out.tokens)
        tokens, last = out.tokens, []
        for i, pair in enumerate(pairs):
            at = _iso(start_ms + i * 60_000)  # a minute a turn: the file gives session starts
            _append(transcript, {"type": "user", "sessionId": sid, "timestamp": at,
                                 "message": {"role": "user", "content": pair.prompt}})  # fmt: skip
            asked = {**base, "hook_event_name": "UserPromptSubmit", "prompt": pair.prompt}
            out = parse_hook_output(self.hook("prompt", asked, realm)[0])
            last = ledger.injected(out)
            self._count(ledger, sid, last, counts)
            self.tally.prompt_tokens.append(out.tokens)
            tokens += out.tokens
            if not pair.reply:  # the question itself: nothing answers it here
                continue
            _append(transcript, {"type": "assistant", "sessionId": sid, "timestamp": at,
                                 "message": {"role": "assistant", "content": [
                                     {"type": "text", "text": pair.reply}]}})  # fmt: skip
            stdout, stderr = self.hook("stop", {**base, "hook_event_name": "Stop",
                                                "stop_hook_active": False}, realm)  # fmt: skip
            recorded = recorded_ids(stdout, stderr)
            self.tally.unrecorded += not recorded
            for role, memory in recorded or [(None, None)]:
                ledger.record(memory, sid, pair.turns, pair.prompt, role)
        self.tally.session_tokens.append(tokens)
        return last

    def _as_turns(self, refs: list[str], ledger: Ledger) -> tuple[list[str], int]:
        """``refs`` with each distilled fragment (a memory drawn from a turn, its source's
        ``turns``, docs/distill.md) read as the turn it came from, and how many were
        fragments."""
        unknown = [r for r in refs if r not in ledger.episodes and not r.startswith("turn:")]
        turn_of = {}
        if unknown:
            with DaemonClient(self.socket) as client:
                for ref in unknown:
                    memory = client.call("get_memory", id=ref)["memory"]
                    drawn = drawn_from(Source.from_dict(memory.get("source") or {}))
                    if drawn:
                        turn_of[ref] = drawn[0]
        return [turn_of.get(r, r) for r in refs], len(turn_of)

    @staticmethod
    def _count(ledger: Ledger, sid: str, refs: list[str], counts: dict[str, int]) -> None:
        repeats, echo = ledger.show(sid, refs)
        counts["injections"] += len(refs)
        counts["repeats"] += repeats
        counts["self_echo"] += echo

    def question(self, q: Question) -> dict[str, Any]:
        """Replay ``q``'s haystack, then ask it; its row of figures."""
        ledger = Ledger()
        counts = {"injections": 0, "repeats": 0, "self_echo": 0}
        for s in q.sessions:
            self.session(q, f"{q.id}-s{s.number}", s.pairs, s.start_ms, ledger, counts)
        ask = Pair(q.text, "", ("question",))
        when = q.date_ms or (q.sessions[-1].start_ms if q.sessions else 0)
        refs = self.session(q, f"{q.id}-question", (ask,), when, ledger, counts)
        stored = sorted({t for ep in ledger.episodes.values() for t in ep.turns} & set(q.gold))
        refs, fragments = self._as_turns(refs, ledger)
        hits = ledger.gold_hits(refs, q.gold)
        return {"id": q.id, "type": q.type, "sessions": len(q.sessions),
                "haystack_sessions": q.haystack_sessions,
                "pairs": sum(len(s.pairs) for s in q.sessions), "gold": list(q.gold),
                "gold_stored": stored, "gold_injected": hits, "hit": bool(hits),
                "question_tokens": self.tally.prompt_tokens[-1],
                "question_injected": len(refs), "question_fragments": fragments,
                **counts}  # fmt: skip


def _append(path: Path, event: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(event) + "\n")


@contextmanager
def _daemon(home: Path, clock_offset_ms: int = 0, distill: bool = True) -> Iterator[Settings]:
    """A daemon on ``home`` whose clock is moved by ``clock_offset_ms`` (the question's date
    as now: CHITTA_CLOCK_OFFSET_MS, passed on in its environment), distilling the turns it
    records or not."""
    settings = Settings(home=home, clock_offset_ms=clock_offset_ms, distill=distill)
    proc, offset = spawn_daemon(settings)
    try:
        wait_for_daemon(settings, proc, offset, timeout_s=START_TIMEOUT_S)
        yield settings
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _store_size(settings: Settings) -> dict[str, Any]:
    with DaemonClient(settings.socket_path) as client:
        status = client.call("memory_status")
    files = [settings.home / f"{settings.store}.db{s}" for s in ("", "-wal", "-shm")]
    return {"memories": sum(status.get("per_realm", {}).values()),
            "bytes": sum(f.stat().st_size for f in files if f.is_file())}  # fmt: skip


def run(questions: list[Question], *, workdir: Path | None = None, distill: bool = True,
        tick: Callable[[str], None] = lambda _: None) -> tuple[Tally, dict[str, Any]]:  # fmt: skip
    """Replay ``questions`` through the hooks against a new daemon (distilling the turns it
    records, or not); the raw tally and the store's size at the end."""
    with tempfile.TemporaryDirectory(prefix="chitta-agent-day-") as tmp:
        root = workdir or Path(tmp)
        home, sessions = root / "home", root / "sessions"
        sessions.mkdir(parents=True, exist_ok=True)
        tally = Tally()
        replay = Replay(home, sessions, tally)
        for i, q in enumerate(questions, 1):
            started = time.perf_counter()
            # Each question lives at its own date: a daemon whose "now" is the question's date
            # (plus the seconds its replay takes), and hooks told the same.
            offset = question_offset_ms(q)
            with _daemon(home, offset, distill) as settings:
                replay.env[CLOCK_VAR] = str(offset)
                row = replay.question(q)
                size = _store_size(settings)
            row["wall_s"] = round(time.perf_counter() - started, 1)
            row["now"] = _iso(int(time.time() * 1000) + offset)
            tally.questions.append(row)
            tick(f"{i}/{len(questions)} {q.id} ({q.type}): "
                 f"{'hit' if row['hit'] else 'miss'}, {row['wall_s']} s")  # fmt: skip
    return tally, size


#: The setting that moves the daemon's and the hooks' clock (config.py).
CLOCK_VAR = "CHITTA_CLOCK_OFFSET_MS"


def question_offset_ms(q: Question) -> int:
    """How far the clock moves so that "now" is ``q``'s date (its last session's start when
    it has none)."""
    when = q.date_ms or (q.sessions[-1].start_ms if q.sessions else None)
    return 0 if when is None else when - int(time.time() * 1000)


def session_count(questions: list[Question]) -> int:
    """Sessions the replay opens: each question's haystack sessions plus its own."""
    return sum(len(q.sessions) + 1 for q in questions)


def hook_count(questions: list[Question]) -> int:
    """Hook processes the replay runs."""
    pairs = sum(len(s.pairs) for q in questions for s in q.sessions)
    return session_count(questions) + 2 * pairs + len(questions)


__all__ = ["CLOCK_NOTE", "Replay", "Session", "Tally", "hook_count", "run", "session_count"]

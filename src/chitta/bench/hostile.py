"""Hostile and ordinary clients of a daemon's socket, for `chitta bench soak` and tests/fault.

The hostile ones: malformed frames (each with the JSON-RPC error codes it may be answered
with), connection floods, slow clients (half a line, then silence), partial clients (gone
mid-line or mid-response) and oversized requests. The ordinary one, :class:`MixedClient`,
sends valid mixed requests and records each write the daemon acknowledged in :class:`Acks`,
which :func:`lost_writes` checks against the store file afterwards.

Whatever is drawn at random is drawn from a ``random.Random`` the caller gives, so a run is
repeatable from its seed (as far as the daemon's timing allows).
"""

from __future__ import annotations

import contextlib
import errno
import json
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.errors import ChittaError, DaemonUnavailable
from chitta.store.backends import open_store

PARSE, REQUEST, PARAMS, METHOD = (protocol.PARSE_ERROR, protocol.INVALID_REQUEST,
                                  protocol.INVALID_PARAMS, protocol.METHOD_NOT_FOUND)  # fmt: skip
#: Any of the four "this is not a request" codes: what random bytes may be answered with.
ANY_BAD = frozenset({PARSE, REQUEST, PARAMS, METHOD})
_WORD_LIST = (
    "amber basil cedar delta ember fjord garnet harbor island jungle kettle lantern meadow "
    "nectar orchid pepper quartz raven saffron timber umber velvet walnut yarrow zephyr "
    "anchor bridge canyon dune engine falcon glacier hammer igloo jasper kayak ladder "
    "magnet needle oyster parrot quiver rocket summit tunnel violin wagon yeti zinc "
    "copper meteor nickel prism sonnet thistle"
)
#: Words the ordinary clients build their memories from (10 of 55 per text: no two texts are
#: near-duplicates, so each write is a new memory).
WORDS = tuple(_WORD_LIST.split())


def connect(path: Path, timeout_s: float = 5.0) -> socket.socket:
    """A connection to ``path``, waiting up to ``timeout_s`` while the daemon's backlog is
    full (a Unix socket with a timeout says EAGAIN at once where a blocking one would wait)."""
    deadline = time.monotonic() + timeout_s
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout_s)
        try:
            s.connect(str(path))
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.005)
        except OSError:
            s.close()
            raise


def errno_name(exc: OSError) -> str:
    if isinstance(exc, TimeoutError) and exc.errno is None:
        return "timeout"
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


# --- malformed frames -----------------------------------------------------------------------


#: Values of the wrong type (or value) for each member a request must get right.
WRONG: dict[str, list[Any]] = {
    "jsonrpc": [2.0, "1.0", "", None, [2], {"v": 2}, True, 10**30],
    "method": [7, 1.5, "", None, ["recall"], {"m": 1}, False],
    "id": [1.5, [1], {"id": 1}, True, False, 1e300],
}


def _valid(rng: random.Random, rid: int) -> bytes:
    method, params = rng.choice([
        ("memory_status", {}),
        ("recall", {"query": " ".join(rng.sample(WORDS, 3)), "realm": "soak-frames"}),
        ("find_triplets", {"subject": rng.choice(WORDS), "realm": "soak-frames"}),
    ])  # fmt: skip
    return protocol.request_line(method, params, rid)[:-1]


def malformed(rng: random.Random, rid: int) -> tuple[bytes, frozenset[int]]:
    """One malformed request line (no newline) and the error codes it may be answered with."""
    kind = rng.randrange(9)
    good = _valid(rng, rid)
    if kind == 0:  # random bytes (one that is not blank, so a reply is due)
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 200)))
        return b"#" + junk.replace(b"\n", b" "), ANY_BAD
    if kind == 1:  # a valid request cut short
        return good[: rng.randint(1, len(good) - 1)], frozenset({PARSE})
    if kind == 2:  # nested past any parser's patience
        depth = rng.randint(2_000, 60_000)
        return b"[" * depth + b"]" * rng.choice((0, depth)), frozenset({PARSE})
    if kind == 3:  # a number too long for Python's int conversion, as the id
        digits = "9" * rng.randint(4_400, 20_000)
        line = f'{{"jsonrpc":"2.0","method":"memory_status","id":{digits}}}'
        return line.encode(), frozenset({PARSE})
    if kind == 4:  # bytes that are not UTF-8, inside a string
        cut = good.index(b'"method"') + 10
        bad = rng.choice((b"\xff", b"\xc3", b"\x80\x80", b"\xf8\x88\x80\x80\x80"))
        return good[:cut] + bad + good[cut:], frozenset({PARSE})
    message: dict[str, Any] = json.loads(good)
    if kind == 5:  # the wrong type for jsonrpc, method or id
        member = rng.choice(sorted(WRONG))
        message[member] = rng.choice(WRONG[member])
        return json.dumps(message).encode(), frozenset({REQUEST})
    if kind == 6:  # params that are not an object
        message["params"] = rng.choice([[1, 2], "text", 3, None, True])
        return json.dumps(message).encode(), frozenset({PARAMS})
    if kind == 7:  # a method that does not exist
        message["method"] = rng.choice(("nope", "recal", "__init__", "memory_status ", "\u00e9"))
        return json.dumps(message).encode(), frozenset({METHOD})
    message["bogus"] = 1  # a member JSON-RPC does not have
    return json.dumps(message).encode(), frozenset({REQUEST})


@dataclass
class Tally:
    """Counts by outcome, shared between threads."""

    counts: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self.counts.items()))


def send_malformed(path: Path, rng: random.Random, tally: Tally, frames: int = 20) -> None:
    """A batch of malformed frames on one connection, in one write or in tiny pieces; each
    reply's code is counted (``code:<n>``), and any reply outside the frame's expected codes
    as ``unexpected:<n>``; a connection refused as busy (a daemon at its connection cap) is
    ``busy``."""
    batch = [malformed(rng, i) for i in range(frames)]
    data = b"".join(frame + b"\n" for frame, _ in batch)
    try:
        with connect(path, timeout_s=30.0) as s:
            if rng.random() < 0.5:
                s.sendall(data)
            else:
                i = 0
                while i < len(data):
                    step = rng.randint(1, 4096)
                    s.sendall(data[i : i + step])
                    i += step
            reader = s.makefile("rb")
            for _, expected in batch:
                line = reader.readline()
                if not line:
                    tally.add("closed_early")
                    return
                error = json.loads(line).get("error", {})
                if (error.get("data") or {}).get("code") == "daemon_busy":
                    tally.add("busy")  # refused at a connection cap: the rest goes unread
                    return
                code = error.get("code")
                tally.add(f"code:{code}")
                if code not in expected:
                    tally.add(f"unexpected:{code}")
    except OSError as exc:
        tally.add(f"os:{errno_name(exc)}")


# --- floods, slow and partial clients, oversized requests ------------------------------------


#: Failed connects in a row after which a flood stops trying.
GIVE_UP = 20


def flood(path: Path, n: int, tally: Tally) -> list[socket.socket]:
    """Open up to ``n`` idle connections (the caller closes them); failures are counted by
    errno, and the flood gives up after :data:`GIVE_UP` failures in a row (no daemon)."""
    held: list[socket.socket] = []
    failed = 0
    for _ in range(n):
        try:
            held.append(connect(path, timeout_s=1.0))
            tally.add("opened")
            failed = 0
        except OSError as exc:
            tally.add(f"failed:{errno_name(exc)}")
            failed += 1
            if failed >= GIVE_UP:
                break
    return held


def slow(path: Path, rng: random.Random, n: int, tally: Tally) -> list[socket.socket]:
    """Open ``n`` connections that each send half a request line, then nothing."""
    half = protocol.request_line("recall", {"query": "half of a question"}, 1)
    held = []
    for _ in range(n):
        try:
            s = connect(path, timeout_s=1.0)
            s.sendall(half[: rng.randint(1, len(half) - 2)])
            held.append(s)
            tally.add("opened")
        except OSError as exc:
            tally.add(f"failed:{errno_name(exc)}")
    return held


def closed_by_peer(conns: list[socket.socket]) -> int:
    """How many of ``conns`` the daemon has closed: reading what it sent last (its idle
    notice) comes to the end of the file, or a reset."""
    gone = 0
    for s in conns:
        try:
            s.setblocking(False)
            while s.recv(65536):
                pass
            gone += 1
        except BlockingIOError:
            pass  # open, nothing more to read
        except OSError:
            gone += 1
    return gone


def close_all(conns: list[socket.socket]) -> None:
    for s in conns:
        with contextlib.suppress(OSError):
            s.close()


def partial(path: Path, rng: random.Random, tally: Tally) -> None:
    """One client that goes away early: mid-line, before reading its reply, or mid-reply."""
    how = rng.choice(("mid_line", "unread_reply", "mid_reply"))
    try:
        with connect(path, timeout_s=10.0) as s:
            if how == "mid_line":
                line = protocol.request_line("memory_status", {}, 1)
                s.sendall(line[: rng.randint(1, len(line) - 2)])
            elif how == "unread_reply":
                s.sendall(protocol.request_line("recall", {"query": "kayak harbor"}, 1))
            else:
                s.sendall(protocol.request_line("export_memories", {}, 1))
                s.recv(rng.randint(1, 200))
        tally.add(how)
    except OSError as exc:
        tally.add(f"os:{errno_name(exc)}")


#: The size of a text parameter far beyond any sensible limit but well inside one request.
BIG_TEXT = 1 << 20


def oversized(path: Path, rng: random.Random, max_request: int, tally: Tally) -> None:
    """A request line over the daemon's limit (answered -32001 and closed), or a recall
    whose query is a mebibyte (answered ``too_large`` once text parameters have a limit)."""
    try:
        with connect(path, timeout_s=60.0) as s:
            if rng.random() < 0.3:
                s.sendall(b'{"jsonrpc":"2.0","method":"recall","params":{"query":"'
                          + b"x" * (max_request + 16) + b'"},"id":1}\n')  # fmt: skip
                kind = "line"
            else:
                words = " ".join(rng.choice(WORDS) for _ in range(BIG_TEXT // 6))
                s.sendall(protocol.request_line("recall", {"query": words}, 1))
                kind = "query"
            line = s.makefile("rb").readline()
        if not line:
            tally.add(f"{kind}:closed")
            return
        reply = json.loads(line)
        if "result" in reply:
            tally.add(f"{kind}:served")
        else:
            error = reply["error"]
            tally.add(f"{kind}:{error['code']}:{(error.get('data') or {}).get('code')}")
    except OSError as exc:
        tally.add(f"os:{errno_name(exc)}")


# --- ordinary clients and what they were promised --------------------------------------------


@dataclass
class Acks:
    """Writes the daemon acknowledged: memories (id → realm), forgets, triplets (id → realm)."""

    remembered: dict[str, str] = field(default_factory=dict)
    forgotten: set[str] = field(default_factory=set)
    triplets: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def remember(self, memory_id: str, realm: str, fresh: bool) -> None:
        with self._lock:
            self.remembered[memory_id] = realm
            if not fresh:  # a near-duplicate names an older memory: it may be one forgotten
                self.forgotten.discard(memory_id)

    def forget(self, memory_id: str) -> None:
        with self._lock:
            self.forgotten.add(memory_id)

    def triplet(self, triplet_id: str, realm: str) -> None:
        with self._lock:
            self.triplets[triplet_id] = realm

    @property
    def writes(self) -> int:
        with self._lock:
            return len(self.remembered) + len(self.forgotten) + len(self.triplets)


#: What :func:`lost_writes` gives when the store holds every acknowledged write.
NOTHING_LOST = {"memories": 0, "forgets": 0, "triplets": 0, "integrity": 0}


def internal_error_count(tallies: dict[str, dict[str, int]]) -> int:
    """Replies of JSON-RPC internal error (-32603) counted in any of ``tallies`` (a tally's
    keys hold the codes between colons)."""
    code = str(protocol.INTERNAL_ERROR)
    return sum(n for counts in tallies.values() for k, n in counts.items()
               if code in k.split(":"))  # fmt: skip


def lost_writes(store_path: Path, acks: Acks) -> dict[str, int]:
    """Acknowledged writes the store file does not hold, by kind; opens the file itself, so
    no daemon may be serving it."""
    with open_store(store_path, create=False) as store:
        live = store.get_many(list(acks.remembered))  # forgotten ones are left out
        lost = {
            "memories": sum(1 for i in acks.remembered if not store.exists(i)),
            "forgets": sum(1 for i in acks.forgotten if i in live),
            "triplets": sum(1 for t in acks.triplets if store.triplet(t) is None),
        }
        lost["integrity"] = 0 if store.integrity_check() == "ok" else 1
    return lost


class MixedClient:
    """Valid requests of every common kind on one connection, writes recorded in ``acks``."""

    def __init__(self, path: Path, name: str, rng: random.Random, acks: Acks, tally: Tally,
                 timeout_s: float = 60.0) -> None:  # fmt: skip
        self.path, self.name, self.rng = path, name, rng
        self.acks, self.tally, self.timeout_s = acks, tally, timeout_s
        self.realm = f"soak-{name}"
        self._client: DaemonClient | None = None
        self._mine: list[str] = []  # ids this client remembered and has not forgotten
        self._n = 0

    def step(self) -> str:
        """One request; what it was and how it went (``op:ok`` or ``op:<error code>``)."""
        op = self._choose()
        try:
            client = self._connection()
            self._do(client, op)
            outcome = "ok"
        except DaemonError as exc:
            outcome = f"{exc.rpc_code}:{exc.code}"
        except DaemonUnavailable:
            self.close()  # the daemon restarts or went away: connect again next time
            outcome = "unavailable"
        except ChittaError as exc:  # refused before it was sent
            outcome = exc.code
        except ValueError:  # a reply cut off mid-line (the daemon was killed)
            self.close()
            outcome = "broken_reply"
        self.tally.add(f"{op}:{outcome}")
        return f"{op}:{outcome}"

    def _choose(self) -> str:
        roll = self.rng.random()
        if roll < 0.30:
            return "remember"
        if roll < 0.62:
            return "recall"
        if roll < 0.70 and self._mine:
            return "forget"
        if roll < 0.80:
            return "add_triplet"
        if roll < 0.90:
            return "find_triplets"
        return "memory_status"

    def _connection(self) -> DaemonClient:
        if self._client is None:
            self._client = DaemonClient(self.path, timeout_s=self.timeout_s)
        return self._client

    def _do(self, client: DaemonClient, op: str) -> None:
        rng, realm = self.rng, self.realm
        if op == "remember":
            self._n += 1
            text = f"{self.name} note {self._n}: " + " ".join(rng.sample(WORDS, 10))
            done = client.call("remember", content=text, realm=realm)
            self.acks.remember(done["id"], realm, fresh=not done.get("deduplicated"))
            if not done.get("deduplicated"):
                self._mine.append(done["id"])
        elif op == "recall":
            client.call("recall", query=" ".join(rng.sample(WORDS, 4)), realm=realm, limit=5)
        elif op == "forget":
            memory_id = self._mine.pop(rng.randrange(len(self._mine)))
            client.call("forget", id=memory_id)
            self.acks.forget(memory_id)
        elif op == "add_triplet":
            a, b = rng.sample(WORDS, 2)
            done = client.call("add_triplet", subject=a, predicate="near", object=b, realm=realm)
            self.acks.triplet(done["triplet"]["id"], realm)
        elif op == "find_triplets":
            client.call("find_triplets", subject=rng.choice(WORDS), realm=realm)
        else:
            client.call("memory_status")

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(OSError):
                self._client.close()
            self._client = None

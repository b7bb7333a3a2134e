"""Settings, read once per entry point from the environment.

Nothing here reads the environment at import time: call :func:`load_settings` where a
process starts (the CLI's group callback, a test, a benchmark) and pass the result down.
Every ``CHITTA_X`` variable is also accepted as the legacy ``CC_SOUL_X``; the ``CHITTA_``
spelling wins when both are set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from chitta.errors import BadArgument, BadConfig
from chitta.homes import default_home
from chitta.recall.confidence.gate import KW_SINGLE_TOKEN_MIN, GateSettings
from chitta.scope import DEFAULT_REALM as DEFAULT_REALM
from chitta.scope import RealmChoice, resolve_realm
from chitta.store.backends import is_database_url, location_key, without_password
from chitta.subconscious.schedule import (
    DEFER_AT_RANGE,
    INTERVAL_RANGE,
    SHARE_RANGE,
    UpkeepSettings,
)

LEGACY_PREFIX = "CC_SOUL_"
PREFIX = "CHITTA_"

#: Largest memory content accepted, in characters. Longer text is refused, not cut: a memory
#: is a unit of knowledge, and a document should be split by the caller.
MAX_CONTENT_CHARS = 32_768
#: Shortest memory content accepted (seed 001, quality gate).
MIN_CONTENT_CHARS = 10
#: Cosine at or above which a new memory reinforces an existing one instead (seed 001).
DEDUP_COSINE = 0.95
#: Tokens the embedder reads; longer text is truncated and the memory says so.
MAX_EMBED_TOKENS = 256
#: Entries of the query/text embedding cache.
EMBED_CACHE_SIZE = 10_000
DEFAULT_STORE = "default"
#: Seconds without a request after which a daemon started on demand stops (30 minutes).
DAEMON_IDLE_S = 1800
#: Connections a daemon keeps open at once; one more is told it is busy.
DAEMON_MAX_CONNECTIONS = 128
#: Seconds a daemon gives a connection to send a whole request line before closing it.
DAEMON_CONNECTION_IDLE_S = 60
#: A daemon's worker threads at most (seed 001's 8-16).
DAEMON_WORKERS = 16


def _env(environ: Mapping[str, str], name: str) -> str | None:
    """``CHITTA_<name>`` or, failing that, the legacy ``CC_SOUL_<name>``."""
    value = environ.get(PREFIX + name)
    if value is None:
        value = environ.get(LEGACY_PREFIX + name)
    return value if value not in (None, "") else None


@dataclass(frozen=True, slots=True)
class EmbedSettings:
    """Which embedding backend to use and where its model lives."""

    backend: str = "onnx"  # onnx | openai | ollama
    model_dir: Path | None = None  # a folder with model.onnx + tokenizer.json (onnx backend)
    url: str | None = None  # endpoint base URL (http backends)
    model: str | None = None  # model name sent to the http backend
    api_key: str | None = None
    timeout_s: float = 30.0
    threads: int = 0  # onnxruntime intra-op threads; 0 lets onnxruntime choose (one per core)


@dataclass(frozen=True, slots=True)
class RecallSwitches:
    """Process-wide recall switches (seed 000): ablation and the two diagnostics."""

    ablate_lanes: tuple[str, ...] = ()  # CHITTA_ABLATE_LANES: lanes off for this process
    profile: bool = False  # CHITTA_RECALL_PROFILE=1: phase timers to stderr
    admit_debug: bool = False  # CHITTA_ADMIT_DEBUG=1: one line per candidate to stderr
    #: CHITTA_REPLICATION_MAX: overrides scoring.json's replication cap (0 = off).
    replication_max: float | None = None
    #: CHITTA_RECALL_CUE_TIME_LIMIT_MS: a time cue's revision runs only this soon after the
    #: recall started (seed 002 §2.7; recall/timecue/cue.py's CUE_TIME_LIMIT_MS).
    cue_time_limit_ms: int = 1000
    #: CHITTA_LEARN: whether the resonance learner tunes recall from feedback (learn/).
    learn: bool = True


@dataclass(frozen=True, slots=True)
class RerankSettings:
    """The optional cross-encoder of the rerank stage (seed 000): where it is, how it runs."""

    onnx_dir: Path | None = None  # CHITTA_RERANK_ONNX_DIR: model.onnx + tokenizer.json; preferred
    model_dir: Path | None = None  # CHITTA_RERANK_MODEL_DIR: a sentence-transformers folder
    threads: int = 8  # CHITTA_RERANK_THREADS: intra-op threads (at most one per core is used)
    max_len: int = 128  # CHITTA_RERANK_MAX_LEN: tokens of one query/document pair

    @property
    def configured(self) -> bool:
        """Whether a reranker is named at all (if not, recall results carry no rerank info)."""
        return self.onnx_dir is not None or self.model_dir is not None


#: The range of CHITTA_DAEMON_IDLE_S in seconds (inclusive): 0 (never) to a year.
DAEMON_IDLE_RANGE = (0, 366 * 86_400)
#: The ranges of CHITTA_DAEMON_MAX_CONNECTIONS, CHITTA_DAEMON_CONNECTION_IDLE_S (seconds, a
#: day at most) and CHITTA_DAEMON_WORKERS (inclusive).
DAEMON_MAX_CONNECTIONS_RANGE = (1, 65_536)
DAEMON_CONNECTION_IDLE_RANGE = (1, 86_400)
DAEMON_WORKERS_RANGE = (1, 256)
#: The range of CHITTA_CLOCK_OFFSET_MS (inclusive): a century either way.
CLOCK_OFFSET_RANGE = (-100 * 366 * 86_400_000, 100 * 366 * 86_400_000)
#: The range of CHITTA_RECALL_CUE_TIME_LIMIT_MS (inclusive); 0 never revises.
CUE_TIME_LIMIT_RANGE = (0, 60_000)
#: Ranges of the rerank numbers (inclusive). 512 tokens is BERT's position limit.
RERANK_THREADS_RANGE = (1, 256)
RERANK_MAX_LEN_RANGE = (8, 512)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything an entry point needs to open a store and embed text."""

    home: Path
    store: str = DEFAULT_STORE
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    recall: RecallSwitches = field(default_factory=RecallSwitches)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    #: The admission gate's switches (recall/confidence/gate.py), for the hook and the MCP gateway.
    gate: GateSettings = field(default_factory=GateSettings)
    log_level: str = "WARNING"
    socket: Path | None = None  # CHITTA_SOCKET_PATH; None: <home>/chitta.sock
    #: The realm of a call that names none, and the rule that chose it (chitta/scope.py).
    realm: RealmChoice = field(default_factory=RealmChoice)
    #: CHITTA_CLOCK_OFFSET_MS: added to the wall clock wherever chitta reads "now" (the
    #: store's times, ages, the spool), to replay history as it happened; 0 normally.
    clock_offset_ms: int = 0
    #: CHITTA_DAEMON_IDLE_S: a daemon started on demand (daemon/launch.py) stops after this
    #: many seconds without a request; 0 never. `chitta serve` run by hand has no idle exit.
    daemon_idle_s: int = DAEMON_IDLE_S
    #: CHITTA_DAEMON_MAX_CONNECTIONS, CHITTA_DAEMON_CONNECTION_IDLE_S, CHITTA_DAEMON_WORKERS:
    #: the daemon's limits (`chitta serve --max-connections/--connection-idle/--workers`).
    daemon_max_connections: int = DAEMON_MAX_CONNECTIONS
    daemon_connection_idle_s: int = DAEMON_CONNECTION_IDLE_S
    daemon_workers: int = DAEMON_WORKERS
    #: CHITTA_MCP_CODE: whether `chitta mcp` offers its ``code`` tool: ``auto`` once code is
    #: indexed in the store (code/offered.py), ``on`` always, ``off`` never.
    mcp_code: str = "auto"
    #: CHITTA_MCP_PROVENANCE: whether `chitta mcp` offers its ``provenance`` tool (off by
    #: default: every tool's definition rides on every request, and the tool list's budget
    #: of 6,000 characters is spent; `chitta provenance` and the RPC method always answer).
    mcp_provenance: bool = False
    #: CHITTA_UPKEEP and CHITTA_UPKEEP_*: the daemon's background upkeep (subconscious/).
    upkeep: UpkeepSettings = field(default_factory=UpkeepSettings)
    #: CHITTA_DISTILL: whether an agent session's turns are distilled as they are stored
    #: (the model-free rules, distill/).
    distill: bool = True

    @property
    def store_is_database(self) -> bool:
        """Whether the store is a database (``CHITTA_STORE=postgresql://…``), not a file."""
        return is_database_url(self.store)

    @property
    def store_path(self) -> Path:
        """The SQLite file of the store (a name under the home); BadArgument for a database
        store, which has no file (use :attr:`store_location`)."""
        if self.store_is_database:
            raise BadArgument(
                f"the store {without_password(self.store)} is a database, not a file: this "
                "needs a SQLite store (a store name under CHITTA_HOME)"
            )
        return store_path(self.home, self.store)

    @property
    def store_location(self) -> str:
        """Where the store is, as :func:`chitta.store.backends.open_store` takes it: the
        database URL as given, or the SQLite file's path (the name checked)."""
        return self.store if self.store_is_database else str(self.store_path)

    @property
    def store_shown(self) -> str:
        """The store's location for people: the path, or the URL without its password."""
        return without_password(self.store_location)

    @property
    def socket_path(self) -> Path:
        """Where the daemon of this store listens (`chitta serve`) and clients connect:
        ``chitta.sock`` for the default store, ``chitta-<store>.sock`` for another, and
        ``chitta-<12 hex>.sock`` for a database (store/backends.py ``location_key``)."""
        if self.socket is not None:
            return self.socket
        if self.store_is_database:
            return self.home / f"{location_key(self.store)}.sock"
        name = SOCKET_NAME if self.store == DEFAULT_STORE else f"chitta-{self.store}.sock"
        return self.home / name

    @property
    def spool_path(self) -> Path:
        """The spool of writes waiting for this store's daemon (chitta/spool.py):
        ``<home>/spool/<store>.jsonl``, a database's named by its ``location_key``."""
        from chitta import spool

        if self.store_is_database:
            return spool.spool_file(self.home, location_key(self.store))
        return spool.spool_path(self.store_path)


#: The daemon's socket file under the home, unless CHITTA_SOCKET_PATH names another.
SOCKET_NAME = "chitta.sock"


def store_path(home: Path, name: str) -> Path:
    """The SQLite file of store ``name`` under ``home``."""
    if not name or "/" in name or name.startswith(".") or len(name) > 64:
        raise BadArgument(
            f"bad store name {name!r}: use 1-64 characters, no '/', not starting with '.'"
        )
    return home / f"{name}.db"


def _float(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = _env(environ, name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise BadArgument(f"{PREFIX}{name} must be a number, got {raw!r}") from None


def _int(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = _env(environ, name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadArgument(f"{PREFIX}{name} must be an integer, got {raw!r}") from None


def _bounded_int(
    environ: Mapping[str, str], name: str, default: int, bounds: tuple[int, int]
) -> int:
    """An integer setting within ``bounds``, or :class:`BadConfig` naming the variable."""
    raw = _env(environ, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadConfig(f"{PREFIX}{name} must be an integer, got {raw!r}") from None
    lo, hi = bounds
    if not lo <= value <= hi:
        raise BadConfig(f"{PREFIX}{name} must be between {lo} and {hi}, got {value}")
    return value


def _flag(environ: Mapping[str, str], name: str, default: bool = False) -> bool:
    raw = (_env(environ, name) or ("1" if default else "0")).strip().lower()
    if raw not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
        raise BadArgument(f"{PREFIX}{name} must be 0 or 1, got {raw!r}")
    return raw in ("1", "true", "yes", "on")


def _recall_switches(environ: Mapping[str, str]) -> RecallSwitches:
    # Imported here: config is the bottom layer, and only this reader needs the lane names.
    from chitta.recall.config import check_lanes
    from chitta.recall.scoring_config import replication_cap

    raw = _env(environ, "ABLATE_LANES") or ""
    lanes = tuple(x.strip() for x in raw.split(",") if x.strip())
    check_lanes(lanes, f"{PREFIX}ABLATE_LANES")
    replication = None
    if _env(environ, "REPLICATION_MAX") is not None:
        value = _float(environ, "REPLICATION_MAX", 0.0)
        replication = replication_cap(value, f"{PREFIX}REPLICATION_MAX")
    return RecallSwitches(
        ablate_lanes=lanes,
        profile=_flag(environ, "RECALL_PROFILE"),
        admit_debug=_flag(environ, "ADMIT_DEBUG"),
        learn=_flag(environ, "LEARN", default=True),
        replication_max=replication,
        cue_time_limit_ms=_bounded_int(
            environ, "RECALL_CUE_TIME_LIMIT_MS", 1000, CUE_TIME_LIMIT_RANGE
        ),
    )


def _rerank_settings(environ: Mapping[str, str]) -> RerankSettings:
    onnx_dir, model_dir = _env(environ, "RERANK_ONNX_DIR"), _env(environ, "RERANK_MODEL_DIR")
    return RerankSettings(
        onnx_dir=Path(onnx_dir).expanduser() if onnx_dir else None,
        model_dir=Path(model_dir).expanduser() if model_dir else None,
        threads=_bounded_int(environ, "RERANK_THREADS", 8, RERANK_THREADS_RANGE),
        max_len=_bounded_int(environ, "RERANK_MAX_LEN", 128, RERANK_MAX_LEN_RANGE),
    )


def load_settings(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
    """Read the settings once from ``environ`` (default: the process environment); the
    realm rule looks for a git root above ``cwd`` (default: the working directory)."""
    env = os.environ if environ is None else environ
    backend = (_env(env, "EMBED_BACKEND") or "onnx").lower()
    if backend not in ("onnx", "openai", "ollama"):
        raise BadArgument(f"{PREFIX}EMBED_BACKEND must be onnx, openai or ollama, got {backend!r}")
    model_dir = _env(env, "EMBED_MODEL_DIR")
    embed = EmbedSettings(
        backend=backend,
        model_dir=Path(model_dir).expanduser() if model_dir else None,
        url=_env(env, "EMBED_URL"),
        model=_env(env, "EMBED_MODEL"),
        api_key=_env(env, "EMBED_API_KEY"),
        timeout_s=_float(env, "EMBED_TIMEOUT_S", 30.0),
        threads=_int(env, "EMBED_THREADS", 0),
    )
    return Settings(
        home=default_home(env),
        store=_env(env, "STORE") or DEFAULT_STORE,
        embed=embed,
        recall=_recall_switches(env),
        rerank=_rerank_settings(env),
        gate=gate_settings(env),
        log_level=(_env(env, "LOG_LEVEL") or "WARNING").upper(),
        socket=Path(raw).expanduser() if (raw := _env(env, "SOCKET_PATH")) else None,
        realm=resolve_realm(None, env, cwd if cwd is not None else _cwd()),
        daemon_idle_s=_bounded_int(env, "DAEMON_IDLE_S", DAEMON_IDLE_S, DAEMON_IDLE_RANGE),
        daemon_max_connections=_bounded_int(
            env, "DAEMON_MAX_CONNECTIONS", DAEMON_MAX_CONNECTIONS, DAEMON_MAX_CONNECTIONS_RANGE
        ),
        daemon_connection_idle_s=_bounded_int(
            env, "DAEMON_CONNECTION_IDLE_S", DAEMON_CONNECTION_IDLE_S, DAEMON_CONNECTION_IDLE_RANGE
        ),
        daemon_workers=_bounded_int(env, "DAEMON_WORKERS", DAEMON_WORKERS, DAEMON_WORKERS_RANGE),
        clock_offset_ms=_bounded_int(env, "CLOCK_OFFSET_MS", 0, CLOCK_OFFSET_RANGE),
        mcp_code=_choice(env, "MCP_CODE", MCP_CODE_CHOICES),
        mcp_provenance=_flag(env, "MCP_PROVENANCE", default=False),
        upkeep=upkeep_settings(env),
        distill=_flag(env, "DISTILL", default=True),
    )


def upkeep_settings(environ: Mapping[str, str]) -> UpkeepSettings:
    """The subconscious's switches: CHITTA_UPKEEP (default 1), CHITTA_UPKEEP_SHARE (percent
    of one core, 1-50, default 10), CHITTA_UPKEEP_DECAY_S, CHITTA_UPKEEP_HYGIENE_S and
    CHITTA_UPKEEP_INDEXES_S (seconds between sweeps, 0 never), CHITTA_UPKEEP_START_S (none
    this soon after a start) and CHITTA_UPKEEP_DEFER_AT (writes waiting at which a remember
    leaves its embedding to the worker; 0 always)."""
    d = UpkeepSettings()
    return UpkeepSettings(
        enabled=_flag(environ, "UPKEEP", default=True),
        share=_bounded_int(environ, "UPKEEP_SHARE", round(d.share * 100), SHARE_RANGE) / 100,
        decay_s=_bounded_int(environ, "UPKEEP_DECAY_S", d.decay_s, INTERVAL_RANGE),
        hygiene_s=_bounded_int(environ, "UPKEEP_HYGIENE_S", d.hygiene_s, INTERVAL_RANGE),
        indexes_s=_bounded_int(environ, "UPKEEP_INDEXES_S", d.indexes_s, INTERVAL_RANGE),
        distill_s=_bounded_int(environ, "UPKEEP_DISTILL_S", d.distill_s, INTERVAL_RANGE),
        start_s=_bounded_int(environ, "UPKEEP_START_S", d.start_s, INTERVAL_RANGE),
        defer_at=_bounded_int(environ, "UPKEEP_DEFER_AT", d.defer_at, DEFER_AT_RANGE),
    )


#: CHITTA_MCP_CODE's values, the default first.
MCP_CODE_CHOICES = ("auto", "on", "off")


def _choice(environ: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """A setting that is one of ``choices`` (any case; the first when unset), or
    :class:`BadConfig` naming the variable."""
    raw = (_env(environ, name) or choices[0]).strip().lower()
    if raw not in choices:
        raise BadConfig(f"{PREFIX}{name} must be one of {', '.join(choices)}, got {raw!r}")
    return raw


def _cwd() -> Path | None:
    try:
        return Path.cwd()
    except OSError:  # the working directory was removed
        return None


def gate_settings(environ: Mapping[str, str] | None = None) -> GateSettings:
    """The admission gate's switches (recall/confidence/gate.py): CHITTA_UNKNOWN_SILENCE
    (default 1) and CHITTA_KW_SINGLE_TOKEN_MIN (default 60, on the 0-100 scale of
    gate.normalised_bm25)."""
    env = os.environ if environ is None else environ
    minimum = _float(env, "KW_SINGLE_TOKEN_MIN", KW_SINGLE_TOKEN_MIN)
    if not 0 <= minimum <= 100:
        raise BadArgument(f"{PREFIX}KW_SINGLE_TOKEN_MIN must lie between 0 and 100, got {minimum}")
    return GateSettings(silence=_flag(env, "UNKNOWN_SILENCE", default=True),
                        kw_single_token_min=minimum)  # fmt: skip

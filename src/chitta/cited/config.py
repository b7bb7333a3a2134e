"""Cited recall's settings file: ``<home>/cited.toml`` (TOML), read into :class:`CitedSettings`.

The whole format, every key optional unless marked::

    limit = 5                   # chunks asked of each source (1-100)
    source_timeout_s = 5.0      # per source (at most 3600); an http source's timeout_s cap

    [merge]
    k = 60                      # RRF constant, at least 1
    min_score = 0.3             # normalised RRF score under which a chunk is dropped, 0-1

    [abstain]
    min_sources = 2             # sources with results (capped at the sources configured)
    min_chunks = 2
    min_top_score = 0.3         # 0-1
    respect_band = true         # abstain when only chitta stores answered, all UNKNOWN

    [synth]
    extractive_sentences = 3    # sentences of the answer when no model answers

    [[model]]                   # tried in order, then the extractive answer
    kind = "openai"             # required: openai (POST {url}/chat/completions) | ollama
    url = "http://127.0.0.1:8642/v1"    # required, http or https
    model = "hermes"            # required
    timeout_s = 30              # the whole exchange, at most 3600
    api_key_env = "OPENAI_API_KEY"      # the variable holding a bearer token

    [[source]]
    name = "memory"             # required, unique: 1-64 letters, digits, _ . -
    kind = "chitta"             # required: chitta | chitta_file | markdown | sqlite_fts | http
    priority = 1.0              # in (0, 10]; default by kind (settings.DEFAULT_PRIORITY)
    # kind-specific options:
    # chitta       realms = ["default"], strategy = "hybrid"
    # chitta_file  path (required), realms, strategy, socket (the daemon's, if not the usual)
    # markdown     paths (required: files or globs)
    # sqlite_fts   path, table, column (required), id_column
    # http         url, text (required), method = "GET" | "POST", query_param = "query",
    #              limit_param = "limit", body (POST: a table whose string values may hold
    #              "{query}" and "{limit}"), results = "" (dotted path to the list; "" is the
    #              reply itself), score, ref (dotted paths), headers (table: one-line ASCII
    #              values), timeout_s (default and cap: source_timeout_s)

Paths (``path``, ``paths``, ``socket``) expand ``~`` and are relative to the file's folder.
Without a file (or with a file that names no ``[[source]]``) the one source is this chitta
store: ``name = "memory", kind = "chitta"``, priority 1.0, over the caller's realm (the realm
rule, or ``--realm``). A ``chitta`` source that names no ``realms`` reads the caller's too;
other sources default to ``["default"]``. Anything else is a :class:`BadConfig` naming the
file and the key.
"""

from __future__ import annotations

import math
import re
import tomllib
import urllib.parse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chitta.cited.settings import (
    DEFAULT_PRIORITY,
    MAX_LIMIT,
    SQL_IDENTIFIER,
    AbstainSettings,
    CitedSettings,
    MergeSettings,
    ModelEndpoint,
    SourceConfig,
    SynthSettings,
)
from chitta.config import DEFAULT_REALM
from chitta.errors import BadConfig, BadScope
from chitta.recall.config import PRESETS
from chitta.validate import check_scope_name

FILE_NAME = "cited.toml"
MODEL_KINDS = ("openai", "ollama")
MAX_PRIORITY = 10.0
#: The longest timeout, in seconds: an hour is already no use to anyone waiting for an answer,
#: and a huge one overflows the platform's timeouts (OverflowError in every wait).
MAX_TIMEOUT_S = 3600.0
#: The largest settings file read: a file this size is not settings (nor is a FIFO or a
#: device — the daemon reads the path a client names).
MAX_FILE_BYTES = 1 << 20

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: An HTTP header name (RFC 9110 token) and value (visible ASCII, spaces and tabs between):
#: http.client refuses anything else at the request, in an error quoting the value.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")

_TOP_KEYS = ("limit", "source_timeout_s", "merge", "abstain", "synth", "model", "source")
_SOURCE_KEYS = ("name", "kind", "priority")
#: Each kind's options: key -> required.
_OPTIONS: dict[str, dict[str, bool]] = {
    "chitta": {"realms": False, "strategy": False},
    "chitta_file": {"path": True, "realms": False, "strategy": False, "socket": False},
    "markdown": {"paths": True},
    "sqlite_fts": {"path": True, "table": True, "column": True, "id_column": False},
    "http": {
        "url": True, "text": True, "method": False, "query_param": False, "limit_param": False,
        "body": False, "results": False, "score": False, "ref": False, "headers": False,
        "timeout_s": False,
    },
}  # fmt: skip


class Reader:
    """Checks values of one file, naming the file and the key in every error."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.base = file.parent

    def fail(self, where: str, problem: str) -> BadConfig:
        return BadConfig(f"{self.file}: {where} {problem}")

    def table(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a table, got {_type(value)}")
        return value

    def keys(self, data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise self.fail(
                where, f"has an unknown key {unknown[0]!r}; it takes: {', '.join(allowed)}"
            )

    def integer(self, value: object, where: str, low: int, high: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"must be an integer, got {_type(value)}")
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            raise self.fail(where, f"must be {bounds}, got {value}")
        return value

    def flag(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, got {_type(value)}")
        return value

    def number(self, value: object, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"must be a number, got {_type(value)}")
        if not math.isfinite(value):
            raise self.fail(where, f"must be a finite number, got {value}")
        return float(value)

    def positive(self, value: object, where: str) -> float:
        number = self.number(value, where)
        if number <= 0:
            raise self.fail(where, f"must be greater than 0, got {value}")
        return number

    def seconds(self, value: object, where: str) -> float:
        """A timeout: more than 0, at most :data:`MAX_TIMEOUT_S`."""
        number = self.positive(value, where)
        if number > MAX_TIMEOUT_S:
            raise self.fail(where, f"must be at most {MAX_TIMEOUT_S:g} seconds, got {value}")
        return number

    def fraction(self, value: object, where: str) -> float:
        number = self.number(value, where)
        if not 0.0 <= number <= 1.0:
            raise self.fail(where, f"must be between 0 and 1, got {value}")
        return number

    def text(self, value: object, where: str, pattern: re.Pattern[str] | None = None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"must be non-empty text, got {_type(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.fail(where, f"is not allowed: {value!r}")
        return value

    def url(self, value: object, where: str) -> str:
        text = self.text(value, where).strip()
        try:
            parts = urllib.parse.urlsplit(text)
            _ = parts.port  # raises on a port that is not a number
        except ValueError as exc:  # "Invalid IPv6 URL", a bad port
            raise self.fail(where, f"is not a URL ({exc}): {text!r}") from None
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            raise self.fail(where, f"must be an http:// or https:// URL, got {text!r}")
        return text

    def path(self, value: object, where: str) -> str:
        """An absolute path: ``~`` expanded, a relative one taken from the file's folder."""
        text = self.text(value, where)
        if "\0" in text:
            raise self.fail(where, "must not hold a NUL character")
        try:
            raw = Path(text).expanduser()
        except RuntimeError as exc:  # "~someone" who has no home here
            raise self.fail(where, f"cannot be expanded: {exc}") from None
        return str(raw if raw.is_absolute() else self.base / raw)

    def headers(self, value: object, where: str) -> dict[str, str]:
        """HTTP headers: names that are tokens, values on one line (never quoted in errors:
        a header may hold a token)."""
        out = {}
        for name, text in self.table(value, where).items():
            if not _HEADER_NAME.fullmatch(name):
                raise self.fail(where, f"has a name that is not an HTTP header name: {name!r}")
            if not isinstance(text, str) or not _HEADER_VALUE.fullmatch(text):
                raise self.fail(
                    f"{where}.{name}",
                    "must be one line of visible ASCII text (no line break, control or "
                    "non-ASCII character, nothing blank around it)",
                )
            out[name] = text
        return out

    def texts(self, value: object, where: str, each: Callable[[object, str], str]) -> list[str]:
        if not isinstance(value, list) or not value:
            raise self.fail(where, f"must be a non-empty list, got {_type(value)}")
        return [each(item, f"{where}[{i}]") for i, item in enumerate(value)]


def _type(value: object) -> str:
    if isinstance(value, list) and not value:
        return "an empty list"
    names = {bool: "true/false", int: "an integer", float: "a number", str: "text",
             list: "a list", dict: "a table"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def default_source() -> SourceConfig:
    """The source cited recall asks when no file names any: this store's default realm."""
    return SourceConfig(name="memory", kind="chitta", priority=DEFAULT_PRIORITY["chitta"],
                        options={"strategy": "hybrid"})  # fmt: skip


def default_settings() -> CitedSettings:
    """The settings without a file: this store's default realm as the one source."""
    return CitedSettings(sources=(default_source(),))


def load_cited_settings(path: Path | None, home: Path) -> CitedSettings:
    """The settings in ``path`` (default ``<home>/cited.toml``); without that default file,
    :func:`default_settings`. A ``path`` given but missing is a :class:`BadConfig`."""
    file = Path(path).expanduser().absolute() if path is not None else home / FILE_NAME
    if not file.exists():
        if path is None:
            return default_settings()
        raise BadConfig(f"no cited recall settings file at {file}")
    return parse_settings(read_toml(file), file)


def read_toml(file: Path) -> dict[str, Any]:
    """The parsed TOML of a settings ``file`` that exists: a regular file of at most
    :data:`MAX_FILE_BYTES`, UTF-8; anything else is a :class:`BadConfig` naming it."""
    if not file.is_file():  # a FIFO would block the reader, a device feed it forever
        raise BadConfig(f"{file}: is not a regular file")
    try:
        with file.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise BadConfig(f"{file}: is larger than {MAX_FILE_BYTES >> 20} MB")
        return tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadConfig(f"{file}: cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadConfig(f"{file}: is not valid TOML: {exc}") from None


def parse_settings(data: Mapping[str, Any], file: Path) -> CitedSettings:
    """Check a parsed file (``file`` names it in errors and anchors relative paths)."""
    r = Reader(file)
    r.keys(data, _TOP_KEYS, "the top level")
    limit = r.integer(data.get("limit", 5), "limit", 1, MAX_LIMIT)
    timeout = r.seconds(data.get("source_timeout_s", 5.0), "source_timeout_s")
    sources = _sources(r, data.get("source", []), timeout)
    return CitedSettings(
        sources=sources or (default_source(),),
        limit=limit,
        source_timeout_s=timeout,
        merge=_merge(r, r.table(data.get("merge", {}), "[merge]")),
        abstain=_abstain(r, r.table(data.get("abstain", {}), "[abstain]")),
        synth=_synth(r, data.get("synth", {}), data.get("model", [])),
    )


def _merge(r: Reader, data: dict[str, Any]) -> MergeSettings:
    r.keys(data, ("k", "min_score"), "[merge]")
    base = MergeSettings()
    return MergeSettings(
        k=r.integer(data.get("k", base.k), "[merge] k", 1),
        min_score=r.fraction(data.get("min_score", base.min_score), "[merge] min_score"),
    )


def _abstain(r: Reader, data: dict[str, Any]) -> AbstainSettings:
    r.keys(data, ("min_sources", "min_chunks", "min_top_score", "respect_band"), "[abstain]")
    base = AbstainSettings()
    sources = data.get("min_sources", base.min_sources)
    chunks = data.get("min_chunks", base.min_chunks)
    top = data.get("min_top_score", base.min_top_score)
    return AbstainSettings(
        min_sources=r.integer(sources, "[abstain] min_sources", 0),
        min_chunks=r.integer(chunks, "[abstain] min_chunks", 0),
        min_top_score=r.fraction(top, "[abstain] min_top_score"),
        respect_band=r.flag(
            data.get("respect_band", base.respect_band), "[abstain] respect_band"
        ),  # fmt: skip
    )


def _synth(r: Reader, synth: object, models: object) -> SynthSettings:
    data = r.table(synth, "[synth]")
    r.keys(data, ("extractive_sentences",), "[synth]")
    if not isinstance(models, list):
        raise r.fail("[[model]]", f"must be an array of tables, got {_type(models)}")
    sentences = data.get("extractive_sentences", SynthSettings().extractive_sentences)
    return SynthSettings(
        models=tuple(model_endpoint(r, item, i) for i, item in enumerate(models, start=1)),
        extractive_sentences=r.integer(sentences, "[synth] extractive_sentences", 1, 50),
    )


def model_endpoint(r: Reader, item: object, number: int) -> ModelEndpoint:
    where = f"[[model]] #{number}"
    data = r.table(item, where)
    r.keys(data, ("kind", "url", "model", "timeout_s", "api_key_env"), where)
    for key in ("kind", "url", "model"):
        if key not in data:
            raise r.fail(where, f"needs the key {key!r}")
    kind = r.text(data["kind"], f"{where} kind")
    if kind not in MODEL_KINDS:
        raise r.fail(f"{where} kind", f"must be one of {', '.join(MODEL_KINDS)}, got {kind!r}")
    env = data.get("api_key_env")
    return ModelEndpoint(
        kind=kind,
        url=r.url(data["url"], f"{where} url"),
        model=r.text(data["model"], f"{where} model").strip(),
        timeout_s=r.seconds(data.get("timeout_s", 30.0), f"{where} timeout_s"),
        api_key_env=None if env is None else r.text(env, f"{where} api_key_env", _ENV_NAME),
    )


def _sources(r: Reader, items: object, timeout: float) -> tuple[SourceConfig, ...]:
    if not isinstance(items, list):
        raise r.fail("[[source]]", f"must be an array of tables, got {_type(items)}")
    out: list[SourceConfig] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        source = _source(r, r.table(item, f"[[source]] #{number}"), number, timeout)
        if source.name in seen:
            raise r.fail(f"[[source]] #{number} name", f"{source.name!r} is used twice")
        seen.add(source.name)
        out.append(source)
    return tuple(out)


def _source(r: Reader, data: dict[str, Any], number: int, timeout: float) -> SourceConfig:
    where = f"[[source]] #{number}"
    for key in ("name", "kind"):
        if key not in data:
            raise r.fail(where, f"needs the key {key!r}")
    name = r.text(data["name"], f"{where} name", _NAME)
    where = f"[[source]] {name!r}"
    kind = r.text(data["kind"], f"{where} kind")
    if kind not in _OPTIONS:
        raise r.fail(f"{where} kind", f"must be one of {', '.join(_OPTIONS)}, got {kind!r}")
    where = f"[[source]] {name!r} ({kind})"
    r.keys(data, _SOURCE_KEYS + tuple(_OPTIONS[kind]), where)
    for key, required in _OPTIONS[kind].items():
        if required and key not in data:
            raise r.fail(where, f"needs the key {key!r}")
    priority = r.number(data.get("priority", DEFAULT_PRIORITY[kind]), f"{where} priority")
    if not 0.0 < priority <= MAX_PRIORITY:
        raise r.fail(f"{where} priority", f"must be in (0, {MAX_PRIORITY:g}], got {priority:g}")
    given = {k: v for k, v in data.items() if k not in _SOURCE_KEYS}
    options = _CHECK[kind](r, given, where, timeout)
    return SourceConfig(name=name, kind=kind, priority=priority, options=options)


def _store_options(r: Reader, data: dict[str, Any], where: str) -> dict[str, Any]:
    def realm(value: object, at: str) -> str:
        try:
            return check_scope_name(r.text(value, at), "realm") or DEFAULT_REALM
        except BadScope as exc:
            raise r.fail(at, f"is not a realm name: {exc}") from None

    strategy = r.text(data.get("strategy", "hybrid"), f"{where} strategy")
    if strategy not in PRESETS:
        raise r.fail(f"{where} strategy", f"must be one of {', '.join(PRESETS)}, got {strategy!r}")
    if "realms" not in data:
        # None named: the caller's realm (the realm rule), else default (sources/__init__.py).
        return {"strategy": strategy}
    realms = r.texts(data["realms"], f"{where} realms", realm)
    return {"realms": list(dict.fromkeys(realms)), "strategy": strategy}


def _chitta(r: Reader, data: dict[str, Any], where: str, timeout: float) -> dict[str, Any]:
    return _store_options(r, data, where)


def _chitta_file(r: Reader, data: dict[str, Any], where: str, timeout: float) -> dict[str, Any]:
    out = {"path": r.path(data["path"], f"{where} path"), **_store_options(r, data, where)}
    if "socket" in data:
        out["socket"] = r.path(data["socket"], f"{where} socket")
    return out


def _markdown(r: Reader, data: dict[str, Any], where: str, timeout: float) -> dict[str, Any]:
    return {"paths": r.texts(data["paths"], f"{where} paths", r.path)}


def _sqlite_fts(r: Reader, data: dict[str, Any], where: str, timeout: float) -> dict[str, Any]:
    out = {"path": r.path(data["path"], f"{where} path")}
    for key in ("table", "column", "id_column"):
        if key in data:
            value = r.text(data[key], f"{where} {key}")
            if not SQL_IDENTIFIER.match(value):
                raise r.fail(
                    f"{where} {key}",
                    f"must be an SQL identifier (letters, digits, _), got {value!r}",
                )
            out[key] = value
    return out


def _http(r: Reader, data: dict[str, Any], where: str, timeout: float) -> dict[str, Any]:
    method = r.text(data.get("method", "GET"), f"{where} method").upper()
    if method not in ("GET", "POST"):
        raise r.fail(f"{where} method", f"must be GET or POST, got {data['method']!r}")
    out: dict[str, Any] = {
        "url": r.url(data["url"], f"{where} url"),
        "method": method,
        "query_param": r.text(data.get("query_param", "query"), f"{where} query_param"),
        "limit_param": r.text(data.get("limit_param", "limit"), f"{where} limit_param"),
        "results": _dotted(r, data.get("results", ""), f"{where} results", empty=True),
        "text": _dotted(r, data["text"], f"{where} text"),
        "timeout_s": r.seconds(data.get("timeout_s", timeout), f"{where} timeout_s"),
    }
    for key in ("score", "ref"):
        if key in data:
            out[key] = _dotted(r, data[key], f"{where} {key}")
    if "body" in data:
        if method != "POST":
            raise r.fail(f"{where} body", 'is sent only with method = "POST"')
        out["body"] = r.table(data["body"], f"{where} body")
    out["headers"] = r.headers(data.get("headers", {}), f"{where} headers")
    return out


def _dotted(r: Reader, value: object, where: str, *, empty: bool = False) -> str:
    """A dotted path into JSON ("data.hits", "document.content"); ``empty``: "" allowed."""
    if empty and value == "":
        return ""
    text = r.text(value, where)
    if any(not part.strip() for part in text.split(".")):
        raise r.fail(where, f"has an empty part: {text!r} (use names joined by dots)")
    return text


_CHECK: dict[str, Callable[[Reader, dict[str, Any], str, float], dict[str, Any]]] = {
    "chitta": _chitta,
    "chitta_file": _chitta_file,
    "markdown": _markdown,
    "sqlite_fts": _sqlite_fts,
    "http": _http,
}

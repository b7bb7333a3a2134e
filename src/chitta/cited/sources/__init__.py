"""Cited recall's sources: one adapter per kind behind the :class:`~chitta.cited.base.Source`
protocol, built from the settings' :class:`~chitta.cited.settings.SourceConfig` list.

- ``chitta``: this process's open store, any realms (chitta_store.py);
- ``chitta_file``: another store file, through its daemon or opened here (chitta_file.py);
- ``markdown``: Markdown memory files, split into sections, BM25 (markdown.py);
- ``sqlite_fts``: any SQLite FTS5 table (sqlite_fts.py);
- ``http``: a JSON search endpoint (http_json.py).

No adapter holds a resource between searches (a ``chitta_file`` source opens and closes its
store per search), so :func:`close_sources` only calls a ``close()`` where one exists.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from chitta.cited.base import Source
from chitta.cited.settings import CitedSettings, SourceConfig
from chitta.config import DEFAULT_REALM, EmbedSettings
from chitta.errors import BadConfig

if TYPE_CHECKING:
    from chitta.api import Chitta
    from chitta.embed.base import Embedder

KINDS = ("chitta", "chitta_file", "markdown", "sqlite_fts", "http")


def build_sources(
    settings: CitedSettings,
    chitta: Chitta | None,
    *,
    embed: EmbedSettings | None = None,
) -> list[Source]:
    """One adapter per configured source, in the settings' order.

    ``chitta`` is the store this process has open (the ``chitta`` kind searches it; without
    one that source answers with an error). A ``chitta_file`` source opened in this process
    embeds with ``chitta``'s embedder, or, with no store open, one built from ``embed``
    (default: the built-in model) on its first search. An unknown kind is a BadConfig."""
    return [_build(config, settings, chitta, _embedder_factory(chitta, embed))
            for config in settings.sources]  # fmt: skip


def close_sources(sources: Iterable[Source]) -> None:
    """Release whatever the sources hold (each ``close()``, where an adapter has one)."""
    for source in sources:
        close = getattr(source, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # closing one must not stop the others
                close()


def _embedder_factory(chitta: Chitta | None, embed: EmbedSettings | None) -> Callable[[], Embedder]:
    if chitta is not None:
        return lambda: chitta.embedder

    built: list[Embedder] = []
    lock = threading.Lock()

    def build() -> Embedder:
        # One model for every chitta_file source of this build, loaded on first need.
        from chitta.embed.loader import build_embedder

        with lock:
            if not built:
                built.append(build_embedder(embed or EmbedSettings()))
            return built[0]

    return build


def _build(
    config: SourceConfig,
    settings: CitedSettings,
    chitta: Chitta | None,
    embedder: Callable[[], Embedder],
) -> Source:
    o: dict[str, Any] = config.options
    name, priority = config.name, config.priority
    if config.kind == "chitta":
        from chitta.cited.sources.chitta_store import ChittaStoreSource

        realms, strategy = o.get("realms", [DEFAULT_REALM]), o.get("strategy", "hybrid")
        return ChittaStoreSource(name, chitta, realms=realms, strategy=strategy, priority=priority)
    if config.kind == "chitta_file":
        from chitta.cited.sources.chitta_file import ChittaFileSource

        return ChittaFileSource(
            name, _required(config, "path"), embedder=embedder,
            realms=o.get("realms", [DEFAULT_REALM]), strategy=o.get("strategy", "hybrid"),
            priority=priority, socket=o.get("socket"),
            gate=chitta.gate if chitta is not None else None, timeout_s=settings.source_timeout_s,
        )  # fmt: skip
    if config.kind == "markdown":
        from chitta.cited.sources.markdown import MarkdownSource

        return MarkdownSource(name, _required(config, "paths"), priority=priority)
    if config.kind == "sqlite_fts":
        from chitta.cited.sources.sqlite_fts import SqliteFtsSource

        return SqliteFtsSource(
            name, _required(config, "path"), _required(config, "table"),
            _required(config, "column"), id_column=o.get("id_column"), priority=priority,
            timeout_s=settings.source_timeout_s,
        )  # fmt: skip
    if config.kind == "http":
        from chitta.cited.sources.http_json import HttpJsonSource

        # The call stops waiting at source_timeout_s: an exchange allowed to run on past it
        # would only keep a thread (and, in the CLI, the process's exit) waiting for nothing.
        timeout_s = min(o.get("timeout_s", settings.source_timeout_s), settings.source_timeout_s)
        return HttpJsonSource(
            name, _required(config, "url"), text=_required(config, "text"),
            method=o.get("method", "GET"), query_param=o.get("query_param", "query"),
            limit_param=o.get("limit_param", "limit"), body=o.get("body"),
            results=o.get("results", ""), score=o.get("score"), ref=o.get("ref"),
            headers=o.get("headers"), timeout_s=timeout_s, priority=priority,
        )  # fmt: skip
    raise BadConfig(
        f"source {config.name!r} has an unknown kind {config.kind!r}; kinds are: {', '.join(KINDS)}"
    )


def _required(config: SourceConfig, key: str) -> Any:
    if key not in config.options:
        raise BadConfig(f"source {config.name!r} ({config.kind}) needs the option {key!r}")
    return config.options[key]

"""A generic HTTP JSON search endpoint as a cited recall source (kind ``http``): seed 003's
Hindsight or OBn, or anything that answers a query with a JSON list of results.

GET sends the query and the limit as URL parameters (``query_param``, ``limit_param``); POST
sends a JSON body: the ``body`` template with ``"{query}"`` and ``"{limit}"`` filled in
(a string that is exactly ``"{limit}"`` becomes the number), or ``{query_param: query,
limit_param: limit}``. In the reply, ``results`` is a dotted path to the list ("data.hits";
"" for the reply itself; a number picks a list item), and ``text``, ``score`` and ``ref``
are dotted paths inside one result. Without ``score`` a result scores 1/rank. The endpoint's
order is kept. Standard library only (urllib, through cited/transport.py: the whole exchange
within ``timeout_s``, the reply at most 16 MB, redirects not followed). A wrong status, a body
that is not JSON, a path that is not there or not of the right type is a :class:`SourceError`
saying which; messages never quote the query.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from chitta.cited.base import Chunk, SourceError
from chitta.cited.settings import DEFAULT_PRIORITY
from chitta.cited.transport import fetch
from chitta.embed.http import _excerpt, _keys

_MISSING = object()


def fill(template: Any, query: str, limit: int) -> Any:
    """``template`` with "{query}" and "{limit}" replaced in its string values (recursively);
    a value that is exactly "{limit}" becomes the number ``limit``."""
    if isinstance(template, str):
        if template == "{limit}":
            return limit
        return template.replace("{query}", query).replace("{limit}", str(limit))
    if isinstance(template, Mapping):
        return {k: fill(v, query, limit) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, query, limit) for v in template]
    return template


def lookup(data: Any, path: str) -> Any:
    """The value at the dotted ``path`` in ``data`` ("" is ``data``), or ``_MISSING``; a
    part that is a number indexes a list."""
    if path == "":
        return data
    for part in path.split("."):
        if isinstance(data, Mapping) and part in data:
            data = data[part]
        elif (
            isinstance(data, list)
            and part.lstrip("-").isdigit()
            and -len(data) <= int(part) < len(data)
        ):
            data = data[int(part)]
        else:
            return _MISSING
    return data


def _shape(data: Any) -> str:
    return _keys(data) if isinstance(data, Mapping) else f"a JSON {_json_type(data)}"


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number",
             float: "number", type(None): "null"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


class HttpJsonSource:
    """Results of a JSON search endpoint at ``url``."""

    kind = "http"

    def __init__(
        self,
        name: str,
        url: str,
        *,
        text: str,
        method: str = "GET",
        query_param: str = "query",
        limit_param: str = "limit",
        body: Mapping[str, Any] | None = None,
        results: str = "",
        score: str | None = None,
        ref: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 5.0,
        priority: float = DEFAULT_PRIORITY["http"],
    ) -> None:
        self.name = name
        self.priority = priority
        self.url = url
        self.method = method.upper()
        self.query_param, self.limit_param = query_param, limit_param
        self.body = body
        self.results, self.text, self.score, self.ref = results, text, score, ref
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s  # of the whole exchange (cited/transport.py)

    def search(self, query: str, limit: int) -> list[Chunk]:
        reply = self._fetch(query, limit)
        items = lookup(reply, self.results)
        where = f"'{self.results}'" if self.results else "the reply"
        if items is _MISSING:
            raise SourceError(f"{self.url} answered no {where} ({_shape(reply)})")
        if not isinstance(items, list):
            raise SourceError(f"{self.url} answered {where} that is {_shape(items)}, not a list")
        out: list[Chunk] = []
        for position, item in enumerate(items):
            if len(out) >= limit:
                break
            chunk = self._chunk(item, position, len(out) + 1)
            if chunk is not None:
                out.append(chunk)
        return out

    def _chunk(self, item: Any, position: int, rank: int) -> Chunk | None:
        """One result as a chunk (None when its text is empty)."""
        text = lookup(item, self.text)
        where = f"{self.url} result {position}"
        if text is _MISSING:
            raise SourceError(f"{where} has no '{self.text}' ({_shape(item)})")
        if not isinstance(text, str):
            raise SourceError(f"{where}: '{self.text}' is a JSON {_json_type(text)}, not text")
        if not text.strip():
            return None
        if self.score is None:
            score = 1.0 / rank
        else:
            raw = lookup(item, self.score)
            if raw is _MISSING:
                raise SourceError(f"{where} has no '{self.score}' ({_shape(item)})")
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                raise SourceError(
                    f"{where}: '{self.score}' is a JSON {_json_type(raw)}, not a number"
                )
            score = float(raw)
        ref = None if self.ref is None else lookup(item, self.ref)
        ref = None if ref is _MISSING or ref is None else str(ref)
        return Chunk(source=self.name, text=text, rank=rank, score=score, ref=ref,
                     meta={"url": self.url, "position": position})  # fmt: skip

    def _request(self, query: str, limit: int) -> urllib.request.Request:
        headers = {"Accept": "application/json", **self.headers}
        if self.method == "GET":
            parts = urllib.parse.urlsplit(self.url)
            params = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
            params += [(self.query_param, query), (self.limit_param, str(limit))]
            url = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(params)))
            return urllib.request.Request(url, headers=headers, method="GET")
        if self.body is not None:
            payload = fill(self.body, query, limit)
        else:
            payload = {self.query_param: query, self.limit_param: limit}
        headers.setdefault("Content-Type", "application/json")
        data = json.dumps(payload).encode()
        return urllib.request.Request(self.url, data=data, headers=headers, method="POST")

    def _fetch(self, query: str, limit: int) -> Any:
        """The endpoint's reply as JSON, or a :class:`SourceError` saying what went wrong."""
        where = f"{self.method} {self.url}"
        raw = fetch(self._request(query, limit), where=where, timeout_s=self.timeout_s,
                    private=[query], error=SourceError)  # fmt: skip
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            excerpt = _excerpt(raw, [query]) or "(empty body)"
            raise SourceError(f"{where} answered something that is not JSON: {excerpt}") from None

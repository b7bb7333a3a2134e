"""The REST API (docs/http.md#the-rest-api): ``POST /api/<operation>`` for every operation the
daemon answers, made from the same descriptions as its JSON-RPC methods, MCP tools and CLI
commands (chitta/ops), and the OpenAPI document that describes them at ``/openapi.json``.

A request's body is the operation's parameters as a JSON object (``{}`` or nothing for
none); the answer is the daemon's result (``{"ok": true, …}``) or ``{"ok": false, "error":
<code>, "message": …}`` with the status that fits: 400 for bad input, 401 without the token,
404 for a memory (symbol, triplet, path) that does not exist or an unknown operation, 413 for
a body over the daemon's request limit, 429 over the rate limits, 503 while the daemon is busy
or stopping, 504 past its deadline. Every operation is a POST: parameters — a query, a
memory's text — never travel in a URL, which proxies and logs keep.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from chitta import __version__
from chitta.daemon import protocol
from chitta.daemon.methods import METHODS
from chitta.errors import ChittaError
from chitta.http.guard import error
from chitta.ops import Operation

log = logging.getLogger(__name__)

Dispatch = Callable[[str, dict[str, Any]], dict[str, Any]]
#: Protocol errors and their HTTP statuses.
_PROTOCOL_STATUS = {
    protocol.METHOD_NOT_FOUND: 404, protocol.INVALID_PARAMS: 400, protocol.SHUTTING_DOWN: 503,
    protocol.TIMEOUT: 504, protocol.BUSY: 503, protocol.TOO_LARGE: 413,
}  # fmt: skip
_PROTOCOL_CODE = {
    protocol.METHOD_NOT_FOUND: "unknown_operation", protocol.SHUTTING_DOWN: "stopping",
    protocol.TIMEOUT: "timeout", protocol.INVALID_PARAMS: "bad_argument",
    protocol.BUSY: "daemon_busy", protocol.TOO_LARGE: "request_too_large",
}  # fmt: skip


@functools.cache
def rest_operations() -> Mapping[str, Operation]:
    """The operations the REST API offers: every method the daemon answers (made once)."""
    return MappingProxyType({name: op for name, op in sorted(METHODS.items()) if not op.local})


def status_of(exc: ChittaError) -> int:
    """The HTTP status of an operation's error."""
    if exc.code.endswith("not_found") or exc.exit_code == 3:
        return 404
    if exc.exit_code == 2:
        return 413 if exc.code in ("too_large", "request_too_large") else 400
    if exc.code in ("daemon_busy", "daemon_starting", "daemon_unavailable"):
        return 503
    if exc.code == "store_read_only":
        return 409
    return 500


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is over ``limit`` bytes (said by its
    Content-Length, or found while reading: the rest is never read)."""
    try:
        if int(request.headers.get("content-length") or 0) > limit:
            return None
    except ValueError:
        pass  # a malformed length: the body's own size decides
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def read_json(request: Request, limit: int) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the error answer: over ``limit`` bytes, not JSON, not
    UTF-8, not an object."""
    body = await read_body(request, limit)
    if body is None:
        return _too_large(limit)
    if not body.strip():
        return {}
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return JSONResponse(error("bad_encoding", "the body is not UTF-8"), status_code=400)
    except (json.JSONDecodeError, RecursionError) as exc:
        return JSONResponse(error("bad_json", f"the body is not JSON: {exc}"[:200]),
                            status_code=400)  # fmt: skip
    if not isinstance(data, dict):
        return JSONResponse(error("bad_json", "the body must be a JSON object of parameters"),
                            status_code=400)  # fmt: skip
    return data


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(error("request_too_large", f"the body is over {limit >> 20} MiB"),
                        status_code=413)  # fmt: skip


def operation_route(dispatch: Dispatch, limit: int):
    """The endpoint of ``POST /api/{name}``."""

    async def endpoint(request: Request) -> Response:
        name = request.path_params["name"]
        op = rest_operations().get(name)
        if op is None:
            return JSONResponse(error("unknown_operation", f"no operation {name!r}; the "
                                      "list is at /openapi.json"), status_code=404)  # fmt: skip
        params = await read_json(request, limit)
        if isinstance(params, Response):
            return params
        try:
            result = await anyio.to_thread.run_sync(lambda: dispatch(name, params))
        except protocol.ProtocolError as exc:
            return JSONResponse(error(_PROTOCOL_CODE.get(exc.code, "bad_request"), str(exc)),
                                status_code=_PROTOCOL_STATUS.get(exc.code, 400))  # fmt: skip
        except ChittaError as exc:
            return JSONResponse(error(exc.code, str(exc)), status_code=status_of(exc))
        except Exception:  # a bug: logged with its traceback (no parameters), answered bare
            log.exception("HTTP request %s failed", name)
            return JSONResponse(error("internal_error", "internal error"), status_code=500)
        return JSONResponse(result, headers={"cache-control": "no-store"})

    return endpoint


ERROR_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"const": False}, "error": {"type": "string"},
                   "message": {"type": "string"}},
    "required": ["ok", "error", "message"],
}  # fmt: skip


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the REST API, from the operations' descriptions."""
    paths: dict[str, Any] = {}
    errors = {str(code): {"description": what, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Error"}}}}
        for code, what in ((400, "bad input"), (401, "no token, or not this server's"),
                           (404, "not found"), (413, "body too large"), (429, "rate limited"),
                           (503, "busy or stopping"), (504, "past the deadline"))}  # fmt: skip
    for name, op in rest_operations().items():
        schema = op.input_schema(None)
        schema["additionalProperties"] = False
        paths[f"/api/{name}"] = {"post": {
            "operationId": name,
            "summary": op.summary,
            "description": op.detail or op.summary,
            "tags": ["writes" if op.writes else "reads"],
            "requestBody": {"required": bool(schema.get("required")),
                            "content": {"application/json": {"schema": schema}}},
            "responses": {"200": {"description": "the daemon's result", "content": {
                "application/json": {"schema": {"type": "object", "properties": {
                    "ok": {"const": True}}, "required": ["ok"]}}}}, **errors},
        }}  # fmt: skip
    paths["/health"] = {"get": {"operationId": "health", "summary": "Whether the server "
                                "answers (no token, reveals nothing).", "security": [],
                                "responses": {"200": {"description": "it answers"}}}}  # fmt: skip
    return {
        "openapi": "3.1.0",
        "info": {"title": "chitta", "version": __version__,
                 "description": "Long-term memory for AI agents: the daemon's operations over "
                                "HTTP (docs/http.md). MCP over HTTP is at /mcp."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR_SCHEMA},
                       "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "security": [{"token": []}],
    }  # fmt: skip

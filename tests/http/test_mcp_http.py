"""MCP over HTTP: the SDK's own streamable-HTTP client against a real daemon's /mcp (that
/mcp needs the token: tests/http/test_rest.py)."""

from __future__ import annotations

import json

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def _session(url: str, token: str, body) -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        await body(session)


def test_the_tools_answer_over_http(http_daemon) -> None:
    async def body(session: ClientSession) -> None:
        listed = await session.list_tools()
        assert {"remember", "recall", "forget"} <= {t.name for t in listed.tools}
        done = await session.call_tool(
            "remember",
            {"content": "Deploys go out on Tuesdays after the release review.", "realm": "w"},
        )
        memory = json.loads(done.content[0].text)["id"]
        found = await session.call_tool("recall", {"query": "when do deploys go out",
                                                   "realm": "w"})  # fmt: skip
        reply = json.loads(found.content[0].text)
        assert reply["band"].startswith("KNOWN") and reply["hits"][0][1] == memory

    anyio.run(_session, http_daemon.url, http_daemon.token, body)


def test_a_call_that_names_no_realm_is_about_default_whatever_the_daemons_realm_rule(
    tmp_path, serve_http
) -> None:
    # The daemon's own realm rule (here CHITTA_REALM) is about its working directory; an
    # HTTP client is elsewhere, so over /mcp, as over REST and the socket, it is default.
    daemon = serve_http(tmp_path / "h", env={"CHITTA_REALM": "the-daemons-own"})

    async def body(session: ClientSession) -> None:
        await session.call_tool("remember", {"content": "The nightly backup runs at 02:00 UTC "
                                             "from the ops host."})  # fmt: skip

    anyio.run(_session, daemon.url, daemon.token, body)
    _, found, _ = daemon.request("/api/recall", {"query": "nightly backup"})
    assert found["scope"]["realm"] == "default" and found["hits"]

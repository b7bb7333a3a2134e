"""The MCP tool ``code`` (ops/code.py ``CODE``) through the SDK's own stdio client against a
real `python -m chitta mcp` and a real daemon: offered once code is indexed in the store (or
by CHITTA_MCP_CODE), its replies in the compact shape (mcp/reply.py ``compact_code``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from chitta.code.offered import marker
from chitta.config import Settings
from chitta.daemon.client import DaemonClient

pytest.importorskip("tree_sitter_python", reason="the code extra: pip install 'chitta[code]'")

CALL_TIMEOUT_S = 120.0
REALM = "shop"
PRICES = 'def price(n):\n    """The price of n items, rounded."""\n    return round(n * 2)\n'
CART = ("from shop.prices import price\n\n\nclass Cart:\n    def total(self):\n"
        "        return price(1) + price(2)\n")  # fmt: skip

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[dict[str, Any], bool]]]


def session(home: Path, body: Callable[[ClientSession, Call], Awaitable[None]], **env: str):
    """Run ``body`` in one MCP session of a server run with ``env`` (CHITTA_* variables)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chitta", "mcp"],
        env={
            "CHITTA_HOME": str(home),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "CHITTA_REALM": REALM,
            **env,
        },  # fmt: skip
    )

    async def run() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as s,
        ):
            await s.initialize()

            async def call(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
                result = await s.call_tool(tool, args)
                return json.loads(result.content[0].text), bool(result.is_error)

            await body(s, call)

    anyio.run(run)


async def names(s: ClientSession) -> set[str]:
    return {tool.name for tool in (await s.list_tools()).tools}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("code") / "shop"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "prices.py").write_text(PRICES)
    (root / "shop" / "cart.py").write_text(CART)
    who = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    for args in (["init", "-q"], ["add", "-A"], [*who, "commit", "-qm", "1"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def test_the_code_tool_joins_once_code_is_indexed(module_home: Path, repo: Path) -> None:
    note = marker(Settings(home=module_home).spool_path)

    async def body(s: ClientSession, call: Call) -> None:
        assert "code" not in await names(s)  # nothing indexed: the tool costs nothing
        refused, failed = await call("code", {"op": "find", "q": "price"})
        assert failed and "unknown tool 'code'" in refused["message"]
        with DaemonClient(module_home / "chitta.sock") as client:
            client.call("code_index", path=str(repo), realm=REALM)
        assert note.exists() and oct(note.stat().st_mode & 0o777) == "0o600"
        listed = {t.name: t for t in (await s.list_tools()).tools}  # the same session
        assert "code" in listed and listed["code"].annotations.read_only_hint
        assert listed["code"].input_schema["required"] == ["op"]

        found, failed = await call("code", {"op": "find", "q": "Cart.total"})
        assert not failed
        assert found == {"ok": True, "symbols": [["shop.cart.Cart.total", "shop/cart.py:5",
                                                   "method", found["symbols"][0][3]]]}  # fmt: skip
        assert "total" in found["symbols"][0][3]
        callers, _ = await call("code", {"op": "callers", "q": "price"})
        (walk,) = callers["symbols"]
        assert walk["symbol"][:3] == ["shop.prices.price", "shop/prices.py:1", "function"]
        assert walk["callers"] == [["shop.cart.Cart.total", "shop/cart.py:6", 1]] * 2
        callees, _ = await call("code", {"op": "callees", "q": "shop.cart.Cart.total"})
        assert [c[0] for c in callees["symbols"][0]["callees"]] == ["shop.prices.price"] * 2
        searched, _ = await call("code", {"op": "search", "q": "price rounded"})
        rows = {row[0]: row for row in searched["symbols"]}
        assert rows["shop.prices.price"][1:3] == ["shop/prices.py:1", "function"]
        outline, _ = await call("code", {"op": "outline"})
        assert set(outline) == {"ok", "outline"} and "price(n)" in outline["outline"]

        missing, failed = await call("code", {"op": "callers"})
        assert failed and missing["error"] == "bad_argument" and "needs q" in missing["message"]
        bad, failed = await call("code", {"op": "grep", "q": "x"})
        assert failed and bad["error"] == "bad_argument" and "choose one of" in bad["message"]
        unknown, failed = await call("code", {"op": "callers", "q": "nowhere_at_all"})
        assert failed and unknown["error"] == "symbol_not_found"

    session(module_home, body)


@pytest.mark.parametrize(("setting", "offered"), [("off", False), ("on", True)])
def test_chitta_mcp_code_overrides(tmp_path: Path, setting: str, offered: bool, reaper) -> None:
    # A home without code: "on" offers the tool anyway, "off" never (listing needs no daemon).
    async def body(s: ClientSession, call: Call) -> None:
        assert ("code" in await names(s)) is offered

    try:
        session(tmp_path / "h", body, CHITTA_MCP_CODE=setting, CHITTA_DAEMON_IDLE_S="1")
    finally:
        reaper(tmp_path / "h")  # the daemon the server began to start

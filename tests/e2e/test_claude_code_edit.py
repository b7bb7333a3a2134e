"""Code intelligence under the real Claude Code client (issue 20): in a repository indexed with
``chitta code index``, a ``Write`` the model makes fires the PostToolUse hook that ``chitta
setup claude`` installed, and the new function is in the index; the request lists chitta's
``code`` tool, and a call of it gets the compact rows back.

The model is the scripted stand-in (conftest.py): its answers are the tool calls below.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PRICES = "def price(n):\n    return round(n * 2)\n"
CART = "from shop.prices import price\n\n\ndef total():\n    return price(1) + price(2)\n"
#: The file the model writes: a new function no other file has, calling price.
DISCOUNT = "from shop.prices import price\n\n\ndef quokka_discount(n):\n    return price(n) / 2\n"
WAIT_S = 60.0  # the hook may spool the re-index while the daemon starts; it lands then


def _call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_edit_{uuid.uuid4().hex[:12]}", "name": name,
             "input": arguments}]  # fmt: skip


def _index(client) -> dict[str, Any]:
    shop = client.repo / "shop"
    shop.mkdir(exist_ok=True)
    (shop / "prices.py").write_text(PRICES)
    (shop / "cart.py").write_text(CART)
    subprocess.run(["git", "-C", str(client.repo), "add", "-A"], check=True)
    done = client.chitta("code", "index", str(client.repo), "--no-embed", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _found(client, name: str) -> list[str]:
    done = client.chitta("code", "find", name, "--json")
    assert done.returncode == 0, done.stderr
    return [s["qualified"] for s in json.loads(done.stdout)["symbols"]]


@pytest.fixture(scope="module")
def edited(client, model_api) -> dict[str, Any]:
    """One ``claude -p`` run: the model writes shop/discount.py, then asks chitta's code tool
    who calls price, then answers."""
    indexed = _index(client)
    target = client.repo / "shop" / "discount.py"
    seen = len(model_api.agent_requests())
    model_api.script(
        _call("Write", {"file_path": str(target), "content": DISCOUNT}),
        _call("mcp__chitta__code", {"op": "callers", "q": "price"}),
        [{"type": "text", "text": "Written."}],
    )
    done = client.run("-p", "Add a discount helper to the shop.", "--session-id",
                      str(uuid.uuid4()), "--output-format", "json",
                      "--allowedTools", "Write", "mcp__chitta__code", timeout=300)  # fmt: skip
    deadline = time.monotonic() + WAIT_S
    found = _found(client, "quokka_discount")
    while not found and time.monotonic() < deadline:
        time.sleep(1)
        found = _found(client, "quokka_discount")
    with (client.home.parent / "requests-edit.jsonl").open("w") as out:
        for body in model_api.agent_requests()[seen:]:
            out.write(json.dumps(body) + "\n")
    return {"indexed": indexed, "found": found, "result": json.loads(done.stdout),
            "requests": model_api.agent_requests()[seen:], "target": target}  # fmt: skip


def _tool_results(body: dict[str, Any]) -> list[str]:
    out = []
    for message in body["messages"]:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                out += [p.get("text", "") for p in parts if isinstance(p, dict)]
    return out


def test_the_model_wrote_the_file(edited) -> None:
    assert Path(edited["target"]).read_text() == DISCOUNT


def test_the_post_edit_hook_indexed_what_the_write_added(edited) -> None:
    assert edited["indexed"]["symbols"] > 0
    assert edited["found"] == ["shop.discount.quokka_discount"]


def test_the_request_lists_the_code_tool_once_code_is_indexed(edited) -> None:
    names = {t["name"] for t in edited["requests"][0]["tools"]}
    assert "mcp__chitta__code" in names


def test_the_code_tool_answers_in_compact_rows(edited) -> None:
    # The last request carries the code tool's result; the new file's call is among them
    # (the hook re-indexed it before the model asked), or the two in cart.py at least.
    results = [r for body in edited["requests"][-1:] for r in _tool_results(body)]
    replies = [json.loads(r) for r in results if r.startswith('{"ok":true,"symbols"')]
    assert replies, results
    (walk,) = replies[-1]["symbols"]
    assert walk["symbol"][:3] == ["shop.prices.price", "shop/prices.py:1", "function"]
    callers = {row[0] for row in walk["callers"]}
    assert "shop.cart.total" in callers

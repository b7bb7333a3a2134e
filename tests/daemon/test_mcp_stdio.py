"""mcp/stdio.py over real pipes: lines to the SDK session, refusals answered, stdout claimed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from chitta.mcp.stdio import next_line, stdio_streams


def test_an_over_long_line_is_read_past_and_the_next_one_read() -> None:
    stream = io.BufferedReader(io.BytesIO(b"x" * 100 + b"\nshort\nend"), buffer_size=8)
    head = next_line(stream, limit=10)
    assert getattr(head, "head", None) == b"x" * 10
    assert next_line(stream, limit=10) == b"short\n"
    assert next_line(stream, limit=10) == b"end"
    assert next_line(stream, limit=10) is None


def test_the_session_gets_messages_and_the_client_gets_refusals() -> None:
    lines = (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
             b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"q":"\xff"}}\n'
             b'{"jsonrpc":"2.0","id":3,"result":{"roots":"\\ud800"}}\n'
             b'{"jsonrpc":"2.0","method":"notifications/x","params":{"q":"\xff"}}\n')  # fmt: skip
    read_fd, write_fd = os.pipe()
    os.write(write_fd, lines)
    os.close(write_fd)
    out = io.BytesIO()
    seen: list[SessionMessage | Exception] = []

    async def serve() -> None:
        async with stdio_streams(os.fdopen(read_fd, "rb"), out) as (from_client, to_client):
            async for item in from_client:
                seen.append(item)
            reply = JSONRPCResponse(jsonrpc="2.0", id=1, result={})
            await to_client.send(SessionMessage(reply))
            await to_client.aclose()

    anyio.run(serve)
    request, answer = (item.message for item in seen)  # type: ignore[union-attr]
    assert isinstance(request, JSONRPCRequest) and request.id == 1
    assert isinstance(answer, JSONRPCError) and answer.id == 3  # what waits for it ends
    written = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [w["id"] for w in written] == [2, 1]  # the notification is not answered
    assert written[0]["error"]["code"] == -32602 and written[1] == {"jsonrpc": "2.0", "id": 1,
                                                                    "result": {}}  # fmt: skip


def test_while_it_serves_stray_output_goes_to_stderr_not_the_wire() -> None:
    script = ("import os\nfrom chitta.mcp.stdio import claim_stdio\n"
              "with claim_stdio() as (wire_in, wire_out):\n"
              "    print('stray', flush=True)\n"
              "    os.system('echo child')\n"
              "    wire_out.write(wire_in.readline()); wire_out.flush()\n"
              "print('after', flush=True)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], input=b"wire\n", capture_output=True,
                          timeout=60, env={**os.environ})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"wire\nafter\n"
    assert done.stderr.split() == [b"stray", b"child"]

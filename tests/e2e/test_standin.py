"""The model stand-in itself (no Claude Code): the Messages API shapes it streams and answers."""

from __future__ import annotations

import json
import urllib.request

TOOLS = [{"name": "mcp__chitta__remember", "input_schema": {"type": "object"}}]


def _post(url: str, body: dict) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["Content-Type"], reply.read()


def _events(raw: bytes) -> list[tuple[str, dict]]:
    events = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: ")
        events.append((name[7:], json.loads(data[6:])))
    return events


def test_a_scripted_tool_call_streams_as_server_sent_events(model_api) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "mcp__chitta__remember",
            "input": {"content": "x"}}  # fmt: skip
    model_api.script([call])
    kind, raw = _post(model_api.url + "/v1/messages?beta=true",
                      {"stream": True, "tools": TOOLS, "messages": []})  # fmt: skip
    assert kind == "text/event-stream"
    events = _events(raw)
    assert [n for n, _ in events] == ["message_start", "content_block_start",
                                      "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"]  # fmt: skip
    assert all(data["type"] == name for name, data in events)
    assert events[1][1]["content_block"] == dict(call, input={})
    assert json.loads(events[2][1]["delta"]["partial_json"]) == {"content": "x"}
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"


def test_requests_outside_the_agent_loop_get_text_and_are_kept(model_api) -> None:
    model_api.script([{"type": "text", "text": "for the agent"}])
    _, raw = _post(model_api.url + "/v1/messages", {"stream": False, "messages": []})
    reply = json.loads(raw)
    assert reply["content"] == [{"type": "text", "text": "ok"}]
    assert reply["stop_reason"] == "end_turn"
    _, raw = _post(model_api.url + "/v1/messages/count_tokens", {"messages": []})
    assert json.loads(raw)["input_tokens"] >= 0
    assert model_api.answers == [[{"type": "text", "text": "for the agent"}]]
    assert [p for _, p, _ in model_api.requests][-2:] == ["/v1/messages",
                                                          "/v1/messages/count_tokens"]  # fmt: skip

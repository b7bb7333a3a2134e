"""chitta under the real Claude Code client (issue 16): two sessions, each of two prompts, run
with ``claude -p`` against the scripted model stand-in; the tests read what Claude Code sent.

Session 1 starts with no daemon: its first prompt stores a fact through the MCP tool
``remember`` and ends (the Stop hook records the turn as an episode); its second prompt asks
about the answer just given. Session 2 asks about the fact; its second prompt asks again.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# Words no other memory or prompt holds, so a hit in a request body is the memory itself.
FACT = "The quokka staging deploy key rotates every Tuesday at 09:40 UTC."
PROMPT_1 = "Please remember the rotation schedule of the quokka staging deploy key."
ANSWER_1 = "Done: I stored the rotation schedule (marigold-lantern) for the quokka key."
PROMPT_1B = "Repeat what you said about the marigold-lantern schedule of the quokka key."
ANSWER_1B = "I said it is stored."
PROMPT_2 = "When does the quokka staging deploy key rotate?"
ANSWER_2 = "Every Tuesday."
PROMPT_2B = "Remind me again: the quokka staging deploy key rotation, which day?"
ANSWER_2B = "Tuesday."
#: A distinctive stretch of session 1's first prompt: the episode's user side.
EPISODE_USER = "rotation schedule of the quokka staging deploy key"
TOOLS_BUDGET_CHARS = 6_000
IDLE_S = 3  # CHITTA_DAEMON_IDLE_S in the client fixture


def text(words: str) -> list[dict[str, Any]]:
    """An assistant answer of one text block."""
    return [{"type": "text", "text": words}]


def tool_call(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant answer calling one tool."""
    return [{"type": "tool_use", "id": f"toolu_standin_{os.urandom(6).hex()}", "name": name,
             "input": arguments}]  # fmt: skip


def _flat(value: Any) -> str:
    """All text of a request body's messages (hook context, prompts, tool results) on one
    line, whitespace collapsed, so clipped or re-wrapped lines still match."""
    return " ".join(json.dumps(value, ensure_ascii=False).replace("\\n", " ").split())


def _norm(words: str) -> str:
    return " ".join(words.split())


@dataclass(frozen=True)
class Run:
    """One ``claude -p`` run: its agent-loop request bodies and Claude Code's JSON result."""

    requests: list[dict[str, Any]]
    result: dict[str, Any]

    @property
    def first(self) -> dict[str, Any]:
        return self.requests[0]

    def new_context(self, before: Run | None) -> str:
        """What this run's first request shows the model that the previous run of the same
        session had not: texts not already in that run's last request (a resumed session
        sends its history again, with other keys beside the same texts), the assistant's own
        messages left out. The system prompt counts too, wherever a client puts context."""
        shown = _shown(self.first)
        if before is not None:
            seen = set(_shown(before.requests[-1]))
            shown = [t for t in shown if t not in seen]
        return _flat(shown)


def _shown(body: dict[str, Any]) -> list[str]:
    """Every text of a request the model reads but did not write: the system prompt, and the
    messages other than the assistant's."""
    system = body.get("system") or []
    system = [{"text": system}] if isinstance(system, str) else system
    others = [m for m in body["messages"] if m.get("role") != "assistant"]
    return _texts(system) + _texts(others)


def _texts(value: Any) -> list[str]:
    """Every text of a list of messages: string contents and the text of text blocks."""
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if not isinstance(value, dict):
        return []
    found = []
    for key in ("content", "text"):
        if isinstance(value.get(key), str):
            found.append(value[key])
        elif isinstance(value.get(key), list):
            found += _texts(value[key])
    return found


@dataclass(frozen=True)
class Conversation:
    s1: Run
    s1b: Run
    s2: Run
    s2b: Run
    daemons_before: list[int]
    export_after_s1: str
    mcp_list: str
    daemons_after_idle: list[int]
    idle_waited_s: float


def _claude(client, model_api, session: str, prompt: str, *answers, resume: bool) -> Run:
    seen = len(model_api.agent_requests())
    model_api.script(*answers)
    flag = "--resume" if resume else "--session-id"
    done = client.run("-p", prompt, flag, session, "--output-format", "json",
                      "--allowedTools", "mcp__chitta__remember")  # fmt: skip
    result = json.loads(done.stdout)
    return Run(model_api.agent_requests()[seen:], result)


@pytest.fixture(scope="module")
def talk(client, model_api) -> Conversation:
    """Both sessions, run once for every test of this module."""
    before = client.daemons()
    s1, s2 = str(uuid.uuid4()), str(uuid.uuid4())
    run_1 = _claude(client, model_api, s1, PROMPT_1,
                    tool_call("mcp__chitta__remember", {"content": FACT}), text(ANSWER_1),
                    resume=False)  # fmt: skip
    exported = client.chitta("export").stdout
    run_1b = _claude(client, model_api, s1, PROMPT_1B, text(ANSWER_1B), resume=True)
    run_2 = _claude(client, model_api, s2, PROMPT_2, text(ANSWER_2), resume=False)
    run_2b = _claude(client, model_api, s2, PROMPT_2B, text(ANSWER_2B), resume=True)
    listed = client.run("mcp", "list", timeout=120).stdout
    # The quiet period starts at the last request; a daemon checks it about once a second.
    started = time.monotonic()
    left = client.daemons()
    while left and time.monotonic() - started < IDLE_S + 15:
        time.sleep(0.5)
        left = client.daemons()
    # Every body Claude Code sent, kept beside the test's HOME for reading after a failure.
    with (client.home.parent / "requests.jsonl").open("w") as out:
        for method, path, body in model_api.requests:
            out.write(json.dumps({"method": method, "path": path, "body": body}) + "\n")
    return Conversation(
        run_1, run_1b, run_2, run_2b, before, exported, listed, left, time.monotonic() - started
    )


def test_session_1_starts_with_no_daemon(talk: Conversation) -> None:
    assert talk.daemons_before == []


def test_session_1_stores_the_remember_call(talk: Conversation) -> None:
    rows = [json.loads(line) for line in talk.export_after_s1.splitlines() if line.strip()]
    assert any(_norm(FACT) in _norm(json.dumps(r)) for r in rows), talk.export_after_s1[:2000]
    results = [b for m in talk.s1.requests[-1]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert len(results) == 1 and not results[0].get("is_error"), results
    reply = json.loads("".join(_texts([results[0]])))
    assert reply["ok"] is True, reply


def test_session_1_stores_its_episode(talk: Conversation) -> None:
    rows = [json.loads(line) for line in talk.export_after_s1.splitlines() if line.strip()]
    episodes = [r for r in rows if _norm(EPISODE_USER) in _norm(json.dumps(r))]
    assert episodes, f"no episode of session 1 in the store:\n{talk.export_after_s1[:2000]}"


def test_session_2_first_prompt_gets_the_fact_and_the_episode(talk: Conversation) -> None:
    shown = talk.s2.new_context(None)
    assert _norm(FACT) in shown, shown[-3000:]
    assert EPISODE_USER in shown, shown[-3000:]


def test_session_2_second_prompt_repeats_none_of_them(talk: Conversation) -> None:
    fresh = talk.s2b.new_context(talk.s2)
    assert _norm(FACT) not in fresh, fresh[-3000:]
    assert EPISODE_USER not in fresh, fresh[-3000:]


def test_session_1_answer_is_not_injected_back_into_session_1(talk: Conversation) -> None:
    fresh = talk.s1b.new_context(talk.s1)
    assert "marigold-lantern) for the quokka key" not in fresh, fresh[-3000:]


#: What the hooks say for the user or for debugging, never for the model (issue 16 part 2).
DIAGNOSTICS = ("no chitta daemon", "chitta calibrate", "memories admitted (")


def test_no_diagnostics_in_the_models_context(talk: Conversation) -> None:
    runs = {"s1": talk.s1, "s1b": talk.s1b, "s2": talk.s2, "s2b": talk.s2b}
    found = set()
    for name, run in runs.items():
        for body in run.requests:
            shown = _flat(body["messages"]) + _flat(body.get("system", ""))
            found |= {(name, phrase) for phrase in DIAGNOSTICS if phrase in shown}
    assert not found, f"diagnostics the model was shown (run, phrase): {sorted(found)}"


def test_claude_mcp_list_shows_chitta_connected(talk: Conversation) -> None:
    line = next((ln for ln in talk.mcp_list.splitlines() if ln.startswith("chitta")), "")
    assert "Connected" in line, talk.mcp_list


def test_no_daemon_left_past_its_quiet_period(talk: Conversation) -> None:
    assert talk.daemons_after_idle == [], f"still running after {talk.idle_waited_s:.0f} s"


def test_the_mcp_tool_list_is_lean(talk: Conversation) -> None:
    tools = [t for t in talk.s1.first["tools"] if t["name"].startswith("mcp__chitta__")]
    assert tools, "Claude Code listed no chitta tool"
    # As Claude Code sends them: compact JSON (JSON.stringify), names with their mcp__ prefix.
    size = sum(len(json.dumps(t, ensure_ascii=False, separators=(",", ":"))) for t in tools)
    assert size <= TOOLS_BUDGET_CHARS, f"{len(tools)} chitta tools take {size} characters"

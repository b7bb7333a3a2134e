"""A Claude Code session as the hooks live it, against a real daemon: no memory injected twice
into one session, shown again after /compact and /clear, nothing again after a resume, the
shown set kept across a daemon restart, and no self-echo of the assistant's own answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chitta.daemon.client import DaemonClient, DaemonError

REALM = "keys"
FACTS = {
    "rotate": "API signing keys are rotated every quarter with scripts/rotate_keys.py",
    "vault": "The signing keys live in the vault under secret/gateway/signing",
    "deploy": "Never deploy the gateway on Fridays; use the staging pipeline instead",
}
KINDS = {"deploy": "correction"}
QUESTION = "How do we rotate the API signing keys for the gateway?"
#: Three earlier answers of the assistant to the same question (the issue's 3 of 7).
ANSWERS = (
    "I think you rotate the API signing keys by editing gateway.yaml by hand and restarting.",
    "The gateway's API signing keys are rotated through the admin console's Keys page.",
    "To rotate the signing keys of the gateway, delete the old ones and let it make new keys.",
)


#: The store this test's daemon serves (conftest.py daemon_store): None, the home's file.
STORE: str | None = None


@pytest.fixture(autouse=True)
def _on_the_tests_store(daemon_store: str | None) -> None:
    """Every hook of the test runs on the test's store (each test runs on both backends)."""
    global STORE
    STORE = daemon_store


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    chosen = {"CHITTA_STORE": STORE} if STORE else {}
    return {**env, "CHITTA_HOME": str(home), "CHITTA_REALM": REALM,
            "CHITTA_HOOK_BUDGET_MS": "60000", "CHITTA_ADMIT_DEBUG": "1", **chosen,
            **extra}  # fmt: skip


def hook(home: Path, name: str, event: dict[str, Any]) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "chitta", "hook", name], input=json.dumps(event),
                          capture_output=True, text=True, env=_env(home), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def injected(done: subprocess.CompletedProcess) -> list[str]:
    """The memory ids the hook put into the model's context, in order."""
    if not done.stdout.strip():
        return []
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return [line.rsplit(", id ", 1)[1].split(":", 1)[0] for line in text.splitlines()[1:]]


def ask(home: Path, session: str, prompt: str = QUESTION) -> list[str]:
    return injected(hook(home, "prompt", {"prompt": prompt, "session_id": session,
                                          "cwd": "/nowhere"}))  # fmt: skip


def start(home: Path, session: str, source: str) -> list[str]:
    return injected(hook(home, "session-start", {"session_id": session, "source": source,
                                                 "cwd": "/nowhere"}))  # fmt: skip


def stop(home: Path, session: str, prompt: str, reply: str, tmp: Path) -> None:
    transcript = tmp / f"{session}-{abs(hash(reply))}.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": reply}]}},
    ]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = hook(home, "stop", {"session_id": session, "transcript_path": str(transcript)})
    assert "recorded the turn as episodes user " in done.stderr, done.stderr


def remember_facts(socket: Path) -> dict[str, str]:
    out = {}
    with DaemonClient(socket) as client:
        for name, content in FACTS.items():
            out[name] = client.call("remember", content=content, realm=REALM,
                                    kind=KINDS.get(name, "insight"))["id"]  # fmt: skip
    return out


@pytest.fixture
def ids(daemon: Path) -> dict[str, str]:
    return remember_facts(daemon)


def test_a_session_is_shown_a_memory_once(home: Path, ids) -> None:
    first = ask(home, "s1")
    assert ids["rotate"] in first
    assert ask(home, "s1") == []  # the same prompt again: nothing new to say
    other = ask(home, "s1", "Where do the gateway signing keys live in the vault?")
    assert not set(other) & set(first)
    assert ask(home, "s2") == first  # another session starts with nothing shown


def test_compact_and_clear_show_again_resume_does_not(home: Path, ids) -> None:
    standing = start(home, "s1", "startup")
    assert standing == [ids["deploy"]]
    first = ask(home, "s1")
    assert first and ask(home, "s1") == []
    assert start(home, "s1", "resume") == []  # a resumed context holds what it was shown
    assert ask(home, "s1") == []
    assert start(home, "s1", "compact") == standing  # the summary lost them: once again
    assert ask(home, "s1") == first
    assert start(home, "s1", "clear") == standing  # a fresh context
    assert ask(home, "s1") == first


def test_the_shown_set_survives_a_daemon_restart(
    home: Path, launch, daemons, daemon_socket: Path
) -> None:
    proc = launch(home, store=STORE)
    remember_facts(daemon_socket)
    first = ask(home, "s1")
    assert first
    daemons.stop(proc)  # as after its quiet period: the session goes on
    launch(home, store=STORE)
    assert ask(home, "s1") == []
    assert ask(home, "s2") == first


def test_no_self_echo(home: Path, ids, daemon: Path, tmp_path: Path) -> None:
    for answer in ANSWERS:  # the Stop hook records each turn of session s1
        stop(home, "s1", QUESTION, answer, tmp_path)
    with DaemonClient(daemon) as client:
        hits = client.call("recall", query=QUESTION, realm=REALM, limit=10)["hits"]
    own = {h["id"] for h in hits if h["source"].get("role") == "assistant"}
    assert len(own) == len(ANSWERS)  # the premise: recall finds all three answers
    # The same session: none of its own answers comes back, whatever their relevance.
    done = hook(home, "prompt", {"prompt": QUESTION, "session_id": "s1", "cwd": "/nowhere"})
    assert ids["rotate"] in injected(done)
    assert not set(injected(done)) & own
    assert "own-answer" in done.stderr.splitlines()[-1]
    # A later session: the answers may come, but below the user's and the curated memories.
    later = ask(home, "s2")
    order = {memory_id: i for i, memory_id in enumerate(later)}
    user = next(h["id"] for h in hits if h["source"].get("role") == "user")
    for answer in own & set(later):
        assert order[answer] > order[ids["rotate"]]
        assert order[answer] > order[user]


def test_an_assistants_text_ranks_below_the_same_text_from_the_user(daemon: Path) -> None:
    text = "The staging database is refreshed from production every Sunday night"
    with DaemonClient(daemon) as client:
        # Another agent axis for each, so that the second is not a duplicate of the first.
        said = client.call("remember", content=text, realm=REALM, kind="episode",
                           session="s1", role="assistant")["id"]  # fmt: skip
        user = client.call("remember", content=text, realm=REALM, kind="episode",
                           session="s1", role="user", agent_id="u")["id"]  # fmt: skip
        hits = client.call("recall", query="when is the staging database refreshed",
                           realm=REALM)["hits"]  # fmt: skip
    by_id = {h["id"]: h for h in hits}
    assert by_id[said]["factors"]["provenance"] == 0.8
    assert by_id[user]["factors"]["provenance"] == 1.0
    assert by_id[said]["final"] < by_id[user]["final"]
    assert [h["id"] for h in hits].index(user) < [h["id"] for h in hits].index(said)


def test_the_stop_hook_links_the_given_memories_its_answer_drew_on(
    home: Path, ids, daemon: Path, tmp_path: Path
) -> None:
    given = ask(home, "u1")
    assert {ids["rotate"], ids["vault"]} <= set(given)  # the premise
    answer = ("Run scripts/rotate_keys.py once a quarter; it writes the new keys to the vault "
              "under secret/gateway/signing.")  # fmt: skip
    transcript = tmp_path / "u1.jsonl"
    transcript.write_text(
        "".join(
            json.dumps(e) + "\n"
            for e in (
                {"type": "user", "message": {"role": "user", "content": QUESTION}},
                {"type": "assistant", "message": {"content": [{"type": "text", "text": answer}]}},
            )
        )
    )
    done = hook(home, "stop", {"session_id": "u1", "transcript_path": str(transcript)})
    assert f"the answer drew on 2 of the {len(given)} memories given" in done.stderr, done.stderr
    with DaemonClient(daemon) as client:  # the batch was taken: the same answer finds none
        again = client.call("session_used", session="u1", answer=answer, prompt=QUESTION)
        assert again == {"ok": True, "session": "u1", "given": 0, "used": [], "linked": 0}
        with pytest.raises(DaemonError, match="answer"):
            client.call("session_used", session="u1")

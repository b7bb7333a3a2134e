"""The size limit of every text parameter: declared once in its operation's description,
refused the same way (``too_large``, naming the parameter and the limit) by the checks every
edge runs, and shown in the MCP schema; and the checks on text, numbers and nested values
that keep junk from reaching the store as anything but ``bad_argument``."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chitta.config import MAX_CONTENT_CHARS
from chitta.errors import BadArgument, ContentTooLong, InputError, TooLarge
from chitta.ops import OPERATIONS, check_params
from chitta.ops.spec import Operation, Param

SIZED = ("text", "when", "tags", "list", "object")
EVERY_SIZED = [(op, p) for op in OPERATIONS.values() for p in op.params if p.type in SIZED]


def base(op: Operation) -> dict[str, Any]:
    """Values of the required parameters that pass the checks, each in its type's shape (a
    parameter with choices: its first)."""
    return {p.name: (p.choices[0] if p.choices else ["x"] if p.type in ("list", "tags") else "x")
            for p in op.params if p.required}  # fmt: skip


def too_long(p: Param) -> Any:
    """One character more than ``p`` takes, in the shape its type has."""
    text = "x" * (p.max_length + 1)
    return {"text": text, "when": text, "tags": [text], "list": [text],
            "object": {"after": text}}[p.type]  # fmt: skip


@pytest.mark.parametrize(("op", "p"), EVERY_SIZED, ids=lambda x: x.name)
def test_every_text_parameter_has_a_limit_that_is_refused_by_name(op: Operation, p: Param) -> None:
    assert isinstance(p.max_length, int) and p.max_length > 0, (op.name, p.name)
    with pytest.raises(TooLarge) as refused:
        check_params(op, {**base(op), p.name: too_long(p)})
    assert p.name in str(refused.value) and f"the limit is {p.max_length:,}" in str(refused.value)
    assert refused.value.code in ("too_large", "content_too_long")
    assert refused.value.exit_code == 2
    at_limit = too_long(replace(p, max_length=p.max_length - 1))
    try:  # other checks may refuse "xxx…", but not for its length
        check_params(op, {**base(op), p.name: at_limit})
    except TooLarge:
        pytest.fail(f"{op.name} {p.name}: {p.max_length} characters are refused")
    except InputError:
        pass


@pytest.mark.parametrize(("op", "p"), [(o, p) for o, p in EVERY_SIZED
                                       if p.type in ("tags", "list", "object")],
                         ids=lambda x: x.name)  # fmt: skip
def test_every_list_has_a_limit_on_its_items(op: Operation, p: Param) -> None:
    assert isinstance(p.max_items, int) and p.max_items > 0, (op.name, p.name)
    many: Any = ["x"] * (p.max_items + 1)
    if p.type == "object":
        many = {"ago": {f"k{i}": 1 for i in range(p.max_items + 1)}}
    with pytest.raises(TooLarge, match=rf"{p.name} .*the limit is {p.max_items:,}"):
        check_params(op, {**base(op), p.name: many})


def test_the_message_names_the_parameter_its_length_and_the_limit() -> None:
    with pytest.raises(TooLarge) as refused:
        check_params(OPERATIONS["recall"], {"query": "x" * 2 * 1024 * 1024})
    assert str(refused.value) == "query is 2,097,152 characters; the limit is 2,000"
    assert refused.value.code == "too_large"


def test_the_limits_fit_their_use() -> None:
    remember, recall = OPERATIONS["remember"], OPERATIONS["recall"]
    by = {(op.name, p.name): p for op in OPERATIONS.values() for p in op.params}
    assert remember.by_name["content"].max_length == MAX_CONTENT_CHARS == 32_768
    for name in ("recall", "reconstruct", "cited_recall"):
        assert by[name, "query"].max_length == 2_000
    for key in [("remember", "realm"), ("recall", "agent_id"), ("recall", "channel"),
                ("import_memories", "into"), ("export_memories", "realm")]:  # fmt: skip
        assert by[key].max_length == 128  # as check_scope_name reads them
    for key in [("add_triplet", "subject"), ("alias_entity", "canonical"),
                ("recall_analogy", "c")]:  # fmt: skip
        assert by[key].max_length == 200  # relations/names.py MAX_ENTITY_CHARS
    assert by["add_triplet", "predicate"].max_length == 64
    assert by["get_memory", "id"].max_length == 128  # a ULID is 26
    assert by["backup", "path"].max_length == 4096  # PATH_MAX
    tags = remember.by_name["tags"]
    assert (tags.max_items, tags.max_length) == (32, 64)  # validate.MAX_TAGS, a tag's 64
    add = OPERATIONS["session_shown"].by_name["add"]
    assert add.max_items == 512  # recall/shown.py keeps at most 512 ids a session
    from chitta.daemon.protocol import MAX_REQUEST_BYTES

    assert by["import_memories", "jsonl"].max_length == MAX_REQUEST_BYTES  # one request
    assert recall.by_name["limit"].maximum == 200


def test_content_over_its_limit_is_content_too_long_a_kind_of_too_large() -> None:
    with pytest.raises(ContentTooLong, match="content is 32,769 characters; the limit is 32,768"):
        check_params(OPERATIONS["remember"], {"content": "x" * (MAX_CONTENT_CHARS + 1)})
    assert issubclass(ContentTooLong, TooLarge) and issubclass(TooLarge, InputError)
    check_params(OPERATIONS["remember"], {"content": "x" * MAX_CONTENT_CHARS})


def test_content_is_measured_as_remember_keeps_it_without_surrounding_whitespace() -> None:
    """The edge counts what the API stores (it strips the content), and says what to do."""
    remember = OPERATIONS["remember"]
    check_params(remember, {"content": "x" * MAX_CONTENT_CHARS + "\n"})
    check_params(remember, {"content": " \t" + "x" * MAX_CONTENT_CHARS + "\r\n\n"})
    with pytest.raises(ContentTooLong) as refused:
        check_params(remember, {"content": "x" * (MAX_CONTENT_CHARS + 1) + "\n"})
    assert str(refused.value) == ("content is 32,769 characters; the limit is 32,768 — split a "
                                  "document into memories of one idea each")  # fmt: skip


def test_tags_as_one_string_have_room_for_every_tag_and_no_more() -> None:
    remember = OPERATIONS["remember"]
    most = ",".join(f"{i:02d}" + "t" * 62 for i in range(32))  # 32 tags of 64
    check_params(remember, {"content": "x", "tags": most})
    with pytest.raises(TooLarge, match="tags is"):
        check_params(remember, {"content": "x", "tags": most + ",more"})


def test_the_schema_leaves_the_limits_to_the_checks() -> None:
    # Every limit is far beyond what a model sends: the tool list, sent with every request,
    # does not carry them (the check refuses an over-long value by name all the same).
    stated = [
        (op.name, name)
        for op in OPERATIONS.values()
        for name, prop in op.input_schema()["properties"].items()
        if {"maxLength", "maxItems"} & set(prop) or "maxLength" in prop.get("items", {})
    ]
    assert stated == []


# --- text that is not Unicode, numbers SQLite cannot hold, nested junk --------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": "a\ud800b"}, r"query is not Unicode text: a lone surrogate \(U\+D800\)"),
        ({"query": "q", "ablate": ["sem", "\udfff"]}, "ablate is not Unicode text"),
        ({"query": "q", "time_cue": {"\ud800": 1}}, "time_cue is not Unicode text"),
        ({"query": "q", "time_cue": {"ago": {"unit": "days", "value": 2**70}}},
         "time_cue holds a whole number outside"),
        ({"query": "q", "time_cue": {"before": float("nan")}}, "time_cue holds nan"),
        ({"query": "q", "time_cue": [[[]]]}, "time_cue must be an object"),
    ],
)  # fmt: skip
def test_junk_is_a_bad_argument_naming_the_parameter(params: dict, message: str) -> None:
    with pytest.raises(BadArgument, match=message):
        check_params(OPERATIONS["recall"], params)


def test_numbers_outside_what_sqlite_stores_are_refused() -> None:
    when = OPERATIONS["find_triplets"]
    with pytest.raises(BadArgument, match="as_of is outside the whole numbers"):
        check_params(when, {"as_of": 2**63})
    check_params(when, {"as_of": 2**63 - 1})  # the date check refuses it, as a date
    with pytest.raises(BadArgument, match="at most 1"):
        check_params(OPERATIONS["add_triplet"], {"subject": "a", "predicate": "p",
                                                 "object": "b", "weight": 2**70})  # fmt: skip
    with pytest.raises(BadArgument, match="threshold must be at most 1"):
        check_params(OPERATIONS["calibrate"], {"golden": "g.jsonl", "threshold": 1e308})


def test_every_number_parameter_has_a_range() -> None:
    for op in OPERATIONS.values():
        for p in op.params:
            if p.type in ("int", "number"):
                assert p.minimum is not None and p.maximum is not None, (op.name, p.name)


# --- the CLI refuses the same, before it opens a store ---------------------------------


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    return {**env, "CHITTA_HOME": str(tmp_path / "home")}


def chitta(tmp_path: Path, *args: str | bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chitta", *args], capture_output=True,
                          env=_env(tmp_path), cwd=tmp_path, timeout=120)  # fmt: skip


def test_the_cli_refuses_a_query_over_the_limit_by_name(tmp_path: Path) -> None:
    done = chitta(tmp_path, "recall", "--json", "x" * 2001)
    assert done.returncode == 2, done.stderr
    assert b"query is 2,001 characters; the limit is 2,000" in done.stdout + done.stderr
    assert b"too_large" in done.stdout + done.stderr
    assert b"Traceback" not in done.stderr
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.db"))


def test_the_cli_refuses_arguments_that_are_not_utf8(tmp_path: Path) -> None:
    # Bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape).
    done = chitta(tmp_path, "recall", b"caf\xe9 au lait")
    assert done.returncode == 2, done.stderr
    assert b"query is not Unicode text" in done.stderr
    assert b"Traceback" not in done.stderr


def test_the_cli_remembers_a_memory_of_the_limit_piped_with_its_newline(tmp_path: Path) -> None:
    words = ("the kayak club meets at the harbor lantern every tuesday " * 700)[:MAX_CONTENT_CHARS]
    content = words[:-1] + "x"  # the limit exactly, nothing to strip at either end
    done = subprocess.run([sys.executable, "-m", "chitta", "remember", "--json", "-"],
                          input=(content + "\n").encode(), capture_output=True, cwd=tmp_path,
                          env=_env(tmp_path), timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b'"ok": true' in done.stdout, done.stdout
    longer = subprocess.run([sys.executable, "-m", "chitta", "remember", "-"],
                            input=(content + "y\n").encode(), capture_output=True,
                            cwd=tmp_path, env=_env(tmp_path), timeout=300)  # fmt: skip
    assert longer.returncode == 2, longer.stderr
    assert longer.stderr.decode().strip() == (
        "error: content is 32,769 characters; the limit is 32,768 — split a document into "
        "memories of one idea each"
    )

"""One description per operation: its checks, its MCP schema and its CLI command agree."""

from __future__ import annotations

import click
import pytest

from chitta.cli.main import main
from chitta.errors import BadArgument
from chitta.ops import OPERATIONS, check_params
from chitta.ops.spec import Operation, Param


def test_parameter_checks_name_the_parameter() -> None:
    recall = OPERATIONS["recall"]
    with pytest.raises(BadArgument, match="needs the parameter 'query'"):
        check_params(recall, {})
    with pytest.raises(BadArgument, match="limit must be a whole number, got true/false"):
        check_params(recall, {"query": "q", "limit": True})
    with pytest.raises(BadArgument, match="cross_realm must be true or false, got text"):
        check_params(recall, {"query": "q", "cross_realm": "yes"})
    with pytest.raises(BadArgument, match="unknown parameter 'qeury'"):
        check_params(recall, {"qeury": "q"})
    with pytest.raises(BadArgument, match="limit must be at most 200, got 201"):
        check_params(recall, {"query": "q", "limit": 201})
    with pytest.raises(BadArgument, match="unknown strategy 'psychic'; choose one of: hybrid"):
        check_params(recall, {"query": "q", "strategy": "psychic"})
    with pytest.raises(BadArgument, match="ablate must be a list of text"):
        check_params(recall, {"query": "q", "ablate": [1]})
    with pytest.raises(BadArgument, match="must be a finite number"):
        edge = {"subject": "a", "predicate": "p", "object": "b", "weight": float("nan")}
        check_params(OPERATIONS["add_triplet"], edge)
    check_params(recall, {"query": "q", "limit": 5, "realm": None})


def test_only_mcp_parameters_are_known_to_mcp() -> None:
    with pytest.raises(BadArgument, match="unknown parameter 'record'"):
        check_params(OPERATIONS["recall"], {"query": "q", "record": False}, offered="mcp")
    check_params(OPERATIONS["recall"], {"query": "q", "record": False})  # the daemon knows it


@pytest.mark.parametrize("op", [op for op in OPERATIONS.values() if op.mcp], ids=lambda o: o.name)
def test_every_mcp_parameter_is_described(op: Operation) -> None:
    schema = op.input_schema()
    for name, prop in schema["properties"].items():
        words = prop["description"]
        assert len(words) > 12 and words != "optional", (op.name, name)
        assert "\n" not in words and "  " not in words, (op.name, name)
    assert len(op.mcp) < 200 and "\n" not in op.mcp


def test_the_schema_carries_types_ranges_choices_and_defaults() -> None:
    props = OPERATIONS["recall"].input_schema()["properties"]
    assert props["limit"] == {"type": "integer", "minimum": 1, "maximum": 200, "default": 10,
                              "description": props["limit"]["description"]}  # fmt: skip
    assert props["strategy"]["enum"] == ["hybrid", "semantic", "keyword", "field"]
    assert props["strategy"]["default"] == "hybrid"
    assert "disable_hdc" not in props and "record" not in props
    assert OPERATIONS["remember"].input_schema()["required"] == ["content"]
    assert "fusion" not in props and "trace" in props  # fusion is a benchmark's knob
    cue = props["time_cue"]
    assert set(cue["properties"]) == {"after", "before", "ago", "confidence"}
    assert cue["properties"]["confidence"]["enum"] == ["sure", "likely", "vague"]
    assert cue["required"] == ["confidence"]


def test_kinds_are_listed_but_read_in_any_case() -> None:
    from chitta.store.kinds import Kind

    kind = OPERATIONS["remember"].input_schema()["properties"]["kind"]
    assert kind["enum"] == [k.value for k in Kind] and len(kind["enum"]) == 26
    check_params(OPERATIONS["remember"], {"content": "a memory of some length", "kind": "Fact"})


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= _commands(command, f"{prefix}{name} ")
        else:
            found[prefix + name] = command
    return found


def test_every_operation_is_a_command_with_json() -> None:
    commands = _commands(main)
    for path, command in commands.items():
        if path.startswith(("bench", "hook ", "model", "serve", "mcp", "hooks", "setup")):
            continue
        assert "as_json" in {p.name for p in command.params}, path
    # Each operation's CLI options are its parameters (under their CLI names).
    recall = commands["recall"]
    options = {o for p in recall.params for o in p.opts}
    for p in OPERATIONS["recall"].params:
        if p.cli and not p.positional and p.type != "flag":
            assert p.option in options, p.name
    assert {"-n", "--agent", "-r", "-s"} <= options


def test_limits_use_minus_n_everywhere() -> None:
    commands = _commands(main)
    for path in ("recall", "reconstruct", "triplet list", "analogy", "cited-recall"):
        assert "-n" in {o for p in commands[path].params for o in p.opts}, path


def test_a_new_operation_needs_only_its_description() -> None:
    text = Param("text", "text", "The text to echo back.", required=True)
    op = Operation("echo_text", "Echo.", (text,), lambda c, p, x: dict(p))
    with pytest.raises(BadArgument, match="needs the parameter 'text'"):
        check_params(op, {})
    assert op.input_schema()["required"] == ["text"]


def test_the_reference_page_is_made_from_the_descriptions() -> None:
    from pathlib import Path

    from chitta.cli.reference import page

    committed = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
    assert committed.read_text(encoding="utf-8") == page(), (
        "docs/operations.md is stale: python -m chitta.cli.reference > docs/operations.md"
    )

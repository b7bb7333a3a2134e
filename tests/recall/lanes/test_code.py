"""The ``code`` lane: which queries are code-like (a pure detector), and, over a real indexed
package (iniconfig, installed with the project's environment) on both backends, the memories
that name the symbols a query names, found through recall."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from chitta.api import Chitta
from chitta.ops import OPERATIONS
from chitta.recall.lanes.code import code_names


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("what did we decide about parse_tags?", ("parse_tags",)),
        ("why is Cart.total slow", ("Cart.total",)),
        ("does std::vector::push_back copy", ("std.vector.push_back",)),
        ("node->next is null", ("node.next",)),
        ("who calls __init__ here", ("__init__",)),
        ("is parseTags or HTTPServer to blame", ("parseTags", "HTTPServer")),
        ("tokenize", ("tokenize",)),  # one identifier is a name
        ("tokenize?", ("tokenize",)),
        ("`IniConfig`", ("IniConfig",)),
        ("store/sqlite.py: the writes", ("sqlite.py",)),
        ("Cart.total()", ("Cart.total",)),
    ],
)
def test_code_like_queries_give_their_names(query: str, names: tuple[str, ...]) -> None:
    assert code_names(query) == names


@pytest.mark.parametrize(
    "query",
    [
        "What did Caroline research?",
        "When did Melanie paint a sunrise? She said so. Then left.",
        "what is the capital of Sweden, e.g. its largest city, i.e. Stockholm",
        "the",  # one word, but a stop word
        "3.5 km in 20 minutes",
        "",
    ],
)
def test_other_queries_are_not_code_like(query: str) -> None:
    assert code_names(query) == ()


def _real_package(tmp_path: Path) -> Path:
    """A copy of the iniconfig package's sources (real code, a few hundred lines)."""
    iniconfig = pytest.importorskip("iniconfig")
    root = tmp_path / "repo"
    shutil.copytree(Path(iniconfig.__file__).parent, root / "iniconfig",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    return root


@pytest.fixture
def indexed(chitta: Chitta, tmp_path: Path) -> Chitta:
    pytest.importorskip("tree_sitter_python", reason="needs the chitta[code] extra")
    OPERATIONS["code_index"].call(chitta, {"path": str(_real_package(tmp_path)), "realm": "work"})
    return chitta


def test_recall_finds_the_memories_naming_a_symbol(indexed: Chitta) -> None:
    chitta = indexed
    target = chitta.remember("We decided parse_lines must keep comment lines out of the "
                             "result", realm="work").id  # fmt: skip
    words = chitta.remember("Parse the lines of the release notes before Friday",
                            realm="work").id  # fmt: skip
    lineof = chitta.remember("IniConfig.lineof answers None for a missing section",
                             realm="work").id  # fmt: skip
    for i in range(10):
        chitta.remember(f"note {i}: the config parser reads lines of text", realm="work")
    for strategy in ("hybrid", "field"):
        result = chitta.recall("what did we decide about parse_lines?", realm="work",
                               strategy=strategy, record=False)  # fmt: skip
        lanes = {h.memory.id: set(h.lanes) for h in result.hits}
        assert result.hits[0].memory.id == target
        assert "code" in lanes[target]
        assert "code" not in lanes.get(words, set())  # the words, not the name
        assert "code" not in lanes.get(lineof, set())
    # A qualified name, and a class by its CamelCase name alone.
    result = chitta.recall("IniConfig.lineof", realm="work", record=False)
    assert "code" in result.hits[0].lanes and result.hits[0].memory.id == lineof
    result = chitta.recall("IniConfig", realm="work", record=False)
    assert {h.memory.id for h in result.hits if "code" in h.lanes} == {lineof}


def test_the_lane_is_silent_without_symbols_or_code_words(chitta: Chitta) -> None:
    chitta.remember("We decided parse_lines must keep comment lines out", realm="work")
    result = chitta.recall("what did we decide about parse_lines?", realm="work",
                           record=False)  # fmt: skip
    assert result.hits and not any("code" in h.lanes for h in result.hits)  # nothing indexed

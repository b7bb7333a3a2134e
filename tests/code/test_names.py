"""Which words of a memory's text may name a symbol (code/names.py): code-like names and
backticked ones, never the ordinary words of real conversations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chitta.code.names import MAX_NAMES, code_names, lookup_form

LOCOMO = Path("/work/shared/data/locomo10.json")


def test_code_like_names_are_found_and_ordinary_words_are_not() -> None:
    text = ("We run the tests and get results; Cart is fine. parse_tags drops empty tags, "
            "Cart.total rounds, chitta::recall ranks, parseTags() and HttpClient too, "
            "e.g. this, i.e. that. URLParser, HTTP, JSON, 3.11, Cart#total, "
            "node->next.")  # fmt: skip
    assert code_names(text) == ["parse_tags", "Cart.total", "chitta::recall", "parseTags",
                                "HttpClient", "URLParser", "Cart#total", "node->next"]  # fmt: skip


def test_backticks_make_any_name_code() -> None:
    text = "Call `run` then `Cart.total()`; `for item in line_items` loops. total(x) too."
    assert code_names(text) == ["run", "Cart.total", "line_items", "total"]


def test_names_are_bounded_and_looked_up_with_dots() -> None:
    assert len(code_names(" ".join(f"name_{i}" for i in range(100)))) == MAX_NAMES
    assert lookup_form("chitta::recall->rank#score") == "chitta.recall.rank.score"


def test_real_conversations_give_almost_no_names() -> None:
    """LoCoMo's 5,882 turns of chat: the few names found are brand-like words (TikTok,
    LeBron), which link only where a repository defines a symbol of exactly that name."""
    if not LOCOMO.exists():
        pytest.skip(f"{LOCOMO} is not here (the shared development data)")
    turns = [t["text"] for conv in json.loads(LOCOMO.read_text())
             for v in conv["conversation"].values() if isinstance(v, list) for t in v]  # fmt: skip
    found = [n for t in turns for n in code_names(t)]
    assert len(turns) > 5000 and len(found) < 40
    assert not {"run", "get", "total", "Cart"} & set(found)
    assert all("_" not in n and "." not in n for n in found)

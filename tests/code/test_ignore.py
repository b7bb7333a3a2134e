"""The small .gitignore reader (code/ignore.py) against the rules of gitignore(5)."""

from __future__ import annotations

import pytest

from chitta.code.ignore import Ignore, parse

RULES = """
# a comment
*.log
!keep.log
/root_only.py
build/
docs/**/draft.md
a/**
data?.csv
[ab]x.py
"""


@pytest.mark.parametrize(
    ("path", "folder", "ignored"),
    [
        ("x.log", False, True),
        ("deep/x.log", False, True),
        ("keep.log", False, False),  # negated: the last match wins
        ("root_only.py", False, True),
        ("sub/root_only.py", False, False),  # a leading / anchors to the file's folder
        ("build", True, True),
        ("build", False, False),  # a trailing / matches folders only
        ("src/build", True, True),
        ("docs/draft.md", False, True),  # **/ matches no folder too
        ("docs/x/y/draft.md", False, True),
        ("a/b/c.py", False, True),
        ("data1.csv", False, True),
        ("data10.csv", False, False),
        ("bx.py", False, True),
        ("cx.py", False, False),
    ],
)
def test_patterns_match_as_git_matches_them(path: str, folder: bool, ignored: bool) -> None:
    rules = Ignore()
    rules.rules = parse(RULES)
    assert rules.ignored(path, folder=folder) is ignored


def test_a_nested_gitignore_applies_below_its_folder_only() -> None:
    rules = Ignore()
    rules.rules = parse("*.py\n", "sub") + parse("/top.txt\n")
    assert rules.ignored("sub/a.py", folder=False)
    assert rules.ignored("sub/deeper/a.py", folder=False)
    assert not rules.ignored("a.py", folder=False)
    assert rules.ignored("top.txt", folder=False) and not rules.ignored("sub/top.txt", folder=False)

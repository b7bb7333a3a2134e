"""The markdown source on real files: sections at headings, BM25 ranking, refs, failures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chitta.cited.base import SourceError
from chitta.cited.sources.markdown import MAX_SECTION_CHARS, MarkdownSource, bm25, split_sections

MEMORY = """\
---
title: project memory
---
The chitta project keeps long-term memory for agents.

# Decisions

## Database
We chose SQLite in WAL mode because crash recovery comes free.

```
# a comment in code, not a heading
```

## Deploys
Never deploy on Fridays; the staging pipeline runs first.

Coffee Rules
------------
The espresso machine is descaled on Mondays.

# People
Alice owns the billing service and its Postgres database.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_splits_into_sections_with_heading_paths(tmp_path: Path) -> None:
    file = write(tmp_path / "MEMORY.md", MEMORY)
    sections = split_sections(MEMORY, file)
    assert [(s.headings, s.line) for s in sections] == [
        ((), 4),  # the text before the first heading; front matter is skipped
        (("Decisions", "Database"), 8),
        (("Decisions", "Deploys"), 15),
        (("Decisions", "Coffee Rules"), 18),  # a setext heading
        (("People",), 22),
    ]
    database = sections[1]
    assert "# a comment in code, not a heading" in database.body  # a fence is not split
    assert database.text.startswith("Decisions > Database\nWe chose SQLite")
    assert database.ref == "MEMORY.md#Database"
    assert sections[0].ref == "MEMORY.md"


def test_sections_are_ranked_by_bm25_and_zero_scores_dropped(tmp_path: Path) -> None:
    write(tmp_path / "MEMORY.md", MEMORY)
    source = MarkdownSource("notes", [tmp_path / "MEMORY.md"])
    chunks = source.search("Which database did we choose, and why WAL?", 5)
    assert [c.ref for c in chunks] == ["MEMORY.md#Database", "MEMORY.md#People"]
    assert [c.rank for c in chunks] == [1, 2]
    assert chunks[0].score > chunks[1].score > 0
    assert chunks[0].source == "notes"
    assert chunks[0].meta == {
        "file": str(tmp_path / "MEMORY.md"),
        "heading": "Decisions > Database",
        "line": 8,
    }
    assert source.search("banana bread with walnuts", 5) == []
    assert source.search("the and of", 5) == []  # stop words only: nothing to score
    assert len(source.search("database", 1)) == 1


def test_heading_words_count_for_their_sections(tmp_path: Path) -> None:
    write(tmp_path / "MEMORY.md", MEMORY)
    (chunk,) = MarkdownSource("notes", [tmp_path / "MEMORY.md"]).search("coffee", 5)
    assert chunk.ref == "MEMORY.md#Coffee Rules"
    assert chunk.text == "Decisions > Coffee Rules\nThe espresso machine is descaled on Mondays."


def test_globs_and_several_files_rank_together(tmp_path: Path) -> None:
    write(tmp_path / "notes" / "a.md", "# Cats\nCats sleep all day long.\n")
    write(tmp_path / "notes" / "b.md", "# Dogs\nDogs chase cats around the yard.\n")
    write(tmp_path / "notes" / "c.txt", "# Cats\ncats cats cats\n")
    source = MarkdownSource("notes", [str(tmp_path / "notes" / "*.md")])
    chunks = source.search("cats", 5)
    assert {c.ref for c in chunks} == {"a.md#Cats", "b.md#Dogs"}
    assert [c.rank for c in chunks] == [1, 2]


def test_long_sections_are_cut_at_paragraphs(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i} about lighthouse keepers. " + "word " * 120 for i in range(8)]
    text = "# Lighthouses\n\n" + "\n\n".join(paragraphs) + "\n"
    file = write(tmp_path / "long.md", text)
    sections = split_sections(text, file)
    assert len(sections) > 1
    assert all(len(s.body) <= MAX_SECTION_CHARS for s in sections)
    assert all(s.headings == ("Lighthouses",) for s in sections)
    assert [s.part for s in sections] == list(range(1, len(sections) + 1))
    assert "".join(s.body.replace("\n\n", "") for s in sections) == "".join(
        p.strip() for p in paragraphs
    )  # nothing lost, each paragraph whole
    chunks = MarkdownSource("m", [file]).search("lighthouse keepers", 20)
    assert {c.meta["parts"] for c in chunks} == {len(sections)}


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    file = write(tmp_path / "MEMORY.md", "# A\nalpha text\n")
    source = MarkdownSource("m", [file])
    assert [c.ref for c in source.search("alpha", 5)] == ["MEMORY.md#A"]
    write(file, "# B\nalpha again, and beta\n")
    os.utime(file, ns=(0, 10**18))  # a new modification time even on coarse clocks
    assert [c.ref for c in source.search("alpha", 5)] == ["MEMORY.md#B"]


def test_missing_files_are_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"no Markdown file at .*gone\.md"):
        MarkdownSource("m", [tmp_path / "gone.md"]).search("x", 5)
    with pytest.raises(SourceError, match=r"no Markdown file matches .*\*\.md"):
        MarkdownSource("m", [str(tmp_path / "*.md")]).search("x", 5)


def test_an_unreadable_file_is_a_source_error(tmp_path: Path) -> None:
    file = write(tmp_path / "secret.md", "# S\nsecret\n")
    file.chmod(0)
    try:
        if os.access(file, os.R_OK):
            pytest.skip("running as a user who reads any file")
        with pytest.raises(SourceError, match=r"cannot read .*secret\.md"):
            MarkdownSource("m", [file]).search("secret", 5)
    finally:
        file.chmod(0o600)


def test_bm25_prefers_rare_terms_and_short_documents() -> None:
    docs = [["cat", "sat"], ["cat", "dog", "bird", "fish", "cow"], ["dog"]]
    cat, rare = bm25(["cat"], docs), bm25(["bird"], docs)
    assert cat[0] > cat[1] > 0 and cat[2] == 0  # the shorter document wins
    assert rare[1] > cat[1]  # a rarer term weighs more
    assert bm25([], docs) == [0.0, 0.0, 0.0]

"""The sqlite_fts source on real SQLite FTS5 files: safe MATCH, bm25 order, read-only, errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chitta.cited.base import SourceError
from chitta.cited.sources.sqlite_fts import SqliteFtsSource, match_expression
from chitta.errors import BadConfig

FACTS = [
    ("f1", "kafka", "The billing service publishes invoices to Kafka"),
    ("f2", "kafka", "Kafka retention is seven days; Kafka brokers run on three hosts"),
    ("f3", "db", "Postgres holds the ledger; Kafka is not used for it"),
    ("f4", "misc", "The espresso machine is descaled on Mondays"),
    ("f5", "kafka in the topic column only", "Nothing here about queues"),
] + [(f"g{i}", "garden", f"Garden note {i}: water the tomatoes") for i in range(10)]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory_store.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE VIRTUAL TABLE facts_fts USING fts5(fact_id, topic, content)")
        conn.executemany("INSERT INTO facts_fts VALUES (?, ?, ?)", FACTS)
        conn.execute("CREATE TABLE plain (content TEXT)")
    conn.close()
    return path


def source(db: Path, **options: str) -> SqliteFtsSource:
    return SqliteFtsSource("facts", db, options.pop("table", "facts_fts"),
                           options.pop("column", "content"), **options)  # fmt: skip


def test_rows_are_ranked_by_bm25_in_the_configured_column(db: Path) -> None:
    chunks = source(db).search("Where does Kafka keep the invoices?", 10)
    assert [c.ref for c in chunks] == ["facts_fts:1", "facts_fts:2", "facts_fts:3"]
    assert [c.rank for c in chunks] == [1, 2, 3]
    assert chunks[0].text == FACTS[0][2]
    assert chunks[0].score > chunks[1].score > chunks[2].score > 0  # score = -bm25
    assert chunks[0].meta == {"table": "facts_fts", "id": 1}
    # Row 5 says "kafka" only in another column: it is not returned.
    assert "facts_fts:5" not in {c.ref for c in chunks}
    assert len(source(db).search("kafka", 2)) == 2


def test_the_id_column_names_the_ref(db: Path) -> None:
    (chunk,) = source(db, id_column="fact_id").search("espresso", 5)
    assert chunk.ref == "facts_fts:f4" and chunk.meta["id"] == "f4"


def test_fts5_syntax_in_the_query_is_plain_words(db: Path) -> None:
    assert match_expression('kafka NOT "ledger" OR content:x*') == (
        '"kafka" OR "ledger" OR "content" OR "x"'
    )
    # Operators, quotes, column filters and stars would be FTS5 syntax; here they are words.
    found = source(db).search('kafka NOT ledger" AND (content: NEAR', 10)
    assert "facts_fts:3" in {c.ref for c in found}
    assert source(db).search('")(*:^', 5) == []  # no words: nothing, and no error


def test_stop_words_are_dropped_unless_nothing_else_is_left() -> None:
    assert match_expression("what is the kafka retention?") == '"kafka" OR "retention"'
    assert match_expression("what is it") == '"what" OR "is" OR "it"'
    assert match_expression("  ?! ") is None


def test_the_file_is_opened_read_only(db: Path) -> None:
    before = db.stat().st_mtime_ns, db.read_bytes()
    source(db).search("kafka", 5)
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"table": "nope"}, r"memory_store\.db has no table 'nope'"),
        ({"table": "plain"}, r"table 'plain' in .* is not an FTS5 table"),
        ({"column": "body"}, r"has no column 'body' \(it has: fact_id, topic, content\)"),
        ({"id_column": "uuid"}, r"has no column 'uuid' for ids"),
    ],
)
def test_missing_tables_and_columns_are_named(db: Path, options: dict, message: str) -> None:
    with pytest.raises(SourceError, match=message):
        source(db, **options).search("kafka", 5)


def test_a_missing_file_is_a_source_error_and_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "gone.db"
    with pytest.raises(SourceError, match=r"no SQLite file at .*gone\.db"):
        source(missing).search("kafka", 5)
    assert not missing.exists()


def test_a_file_that_is_not_sqlite_is_a_source_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database, just some bytes " * 100)
    with pytest.raises(SourceError, match=r"junk\.db"):
        source(junk).search("kafka", 5)


@pytest.mark.parametrize(
    ("key", "value"), [("table", "t; DROP TABLE x"), ("column", "a b"), ("id_column", "1x")]
)
def test_names_that_are_not_identifiers_are_refused(db: Path, key: str, value: str) -> None:
    options = {"table": "facts_fts", "column": "content", key: value}
    with pytest.raises(BadConfig, match=f"{key} must be an SQL identifier"):
        source(db, **options)

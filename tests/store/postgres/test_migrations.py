"""Schema migrations of a PostgreSQL store: a database made by an older chitta opens at the
latest with its rows intact (version 7: find_symbol's name index; 8: memories by their time;
9: memories' pieces)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from tests.conftest import memory

from chitta.embed.pieces import pack
from chitta.errors import StoreError
from chitta.store.postgres import PostgresStore, schema

#: (id, name, qualified, path, start_line): "total" in two cases and under two classes.
SYMBOLS = (
    ("s-upper", "Total", "shop.cart.Total", "shop/cart.py", 1),
    ("s-cart", "total", "shop.cart.Cart.total", "shop/cart.py", 5),
    ("s-bill", "total", "shop.bill.Bill.total", "shop/bill.py", 3),
    ("s-totals", "totals", "shop.bill.totals", "shop/bill.py", 9),
)


def build_at(url: str, version: int) -> None:
    """The database at ``version``, as that chitta made it, holding :data:`SYMBOLS`."""
    with psycopg.connect(url, autocommit=True) as conn:
        for step in range(version):
            with conn.transaction():
                conn.execute(schema.MIGRATIONS[step])
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             (str(step + 1),))  # fmt: skip
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO code_symbols VALUES (%s,'old','/src/shop',%s,%s,%s,%s,'method','',"
                "%s,%s,NULL,'python','','',7,NULL)",
                [(sid, path, name, name.lower(), q, line, line + 1)
                 for sid, name, q, path, line in SYMBOLS],
            )  # fmt: skip


def name_indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'code_symbols'")
        return {r[0] for r in rows} - {"code_symbols_pkey", "code_symbols_file"}


def test_a_version_6_database_finds_its_symbols_through_the_new_index(
    pg_url: str, tmp_path: Path
) -> None:
    build_at(pg_url, 6)
    assert name_indexes(pg_url) == {"code_symbols_name"}
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert store.meta("schema_version") == str(schema.LATEST) == "9"
        find = store.code().find_symbols
        assert [f.id for f in find("old", "total")] == ["s-bill", "s-cart", "s-upper"]
        assert [f.id for f in find("old", "Bill.TOTAL")] == ["s-bill"]
        assert [f.id for f in find("old", "Total", prefix=True)] == [
            "s-upper", "s-bill", "s-cart", "s-totals"]  # fmt: skip
    assert name_indexes(pg_url) == {"code_symbols_find"}


def test_a_failing_migration_7_keeps_the_old_index(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is dropped and made again in one transaction: a failure keeps the old one
    and the version, and the next open makes the new one."""
    build_at(pg_url, 6)
    broken = (*schema.MIGRATIONS[:6], schema.MIGRATIONS[6] + "\nNOT SQL AT ALL;\n")
    monkeypatch.setattr(schema, "MIGRATIONS", broken)
    with pytest.raises(StoreError):
        PostgresStore(pg_url, home=tmp_path)
    assert name_indexes(pg_url) == {"code_symbols_name"}
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "6",)  # fmt: skip
    monkeypatch.undo()
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert [f.id for f in store.code().find_symbols("old", "Bill.total")] == ["s-bill"]
    assert name_indexes(pg_url) == {"code_symbols_find"}


def test_a_version_7_database_finds_a_periods_memories_through_the_time_index(
    pg_url: str, tmp_path: Path
) -> None:
    build_at(pg_url, 7)
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert store.meta("schema_version") == str(schema.LATEST)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'memories'")
        assert "memories_time" in {r[0] for r in rows}


def test_a_version_8_database_keeps_memories_pieces_after_the_step(
    pg_url: str, tmp_path: Path, embedder
) -> None:
    build_at(pg_url, 8)
    with PostgresStore(pg_url, home=tmp_path) as store:
        assert store.meta("schema_version") == "9"
        store.bind_model(embedder.identity())
        m = memory("The ferry leaves at seven. It sails from pier four.")
        vectors = embedder.embed([m.content, "The ferry leaves at seven."]).vectors
        store.insert([(m, vectors[0])])
        assert store.set_pieces({m.id: pack(vectors[1:])}) == 1
        assert store.pieces_for([m.id]) == {m.id: pack(vectors[1:])}

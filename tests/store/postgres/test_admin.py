"""The benchmarks' server chores (store/postgres/admin.py through store/backends.py): a fresh
database per store, the server's settings, and the HNSW index built again on a full table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chitta.embed.base import ModelIdentity
from chitta.errors import BadArgument, StoreUnsupported
from chitta.store.backends import drop_database, fresh_database, open_store, server_settings
from chitta.store.postgres import PostgresStore
from chitta.store.records import Scope

MODEL = ModelIdentity("test-model", 4, "0" * 64)


def test_a_fresh_database_is_empty_each_time(pg_server, tmp_path: Path, make_memory) -> None:
    server = pg_server.get_uri()
    url = fresh_database(server, "chitta_admin_test")
    assert url.startswith("postgresql://")
    with open_store(url, home=tmp_path / "home") as store:
        store.bind_model(MODEL)
        store.insert([(make_memory("kept until the next fresh one"), np.ones(4, np.float32))])
        assert store.counts()["memories"] == 1
    again = fresh_database(server, "chitta_admin_test")
    with open_store(again, home=tmp_path / "home") as store:
        assert store.counts()["memories"] == 0 and store.model_identity() is None
    drop_database(server, "chitta_admin_test")
    drop_database(server, "chitta_admin_test")  # gone already: no error
    with pytest.raises(BadArgument, match="plain database name"):
        fresh_database(server, "x; DROP DATABASE postgres")


def test_server_settings_name_the_versions(pg_server) -> None:
    found = server_settings(pg_server.get_uri())
    assert found["server_version"].split(".")[0].isdigit()
    assert found["pgvector"] != "not installed"
    assert {"shared_buffers", "maintenance_work_mem", "fsync"} <= set(found)


def test_the_hnsw_index_is_built_again_and_still_answers(
    pg_url: str, tmp_path: Path, make_memory
) -> None:
    with PostgresStore(pg_url, home=tmp_path / "home", hnsw_min=1) as store:
        with pytest.raises(StoreUnsupported, match="no model"):
            store.rebuild_vector_index()
        store.bind_model(MODEL)
        rng = np.random.default_rng(0)
        items = [(make_memory(f"memory {i}"), rng.normal(size=4).astype(np.float32))
                 for i in range(200)]  # fmt: skip
        store.insert(items)
        built = store.rebuild_vector_index("256MB")
        assert built["index"] == "embeddings_hnsw_4" and built["maintenance_work_mem"] == "256MB"
        assert built["bytes_after"] > 0 and built["bytes_before"] > 0
        assert store.vector_search_is_approximate("work")
        first, vector = items[0][0], items[0][1]
        assert store.vector_search(vector, Scope("work"), 1)[0][0] == first.id

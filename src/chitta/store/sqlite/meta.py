"""The store's metadata table, and the model identity recorded in it."""

from __future__ import annotations

import json

import numpy as np

from chitta.embed.base import ModelIdentity
from chitta.errors import ModelMismatch
from chitta.store.sqlite.connection import Connection


class Meta(Connection):
    """The metadata table and the model identity."""

    # --- metadata and the model identity -------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete_meta(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def meta_items(self) -> dict[str, str]:
        """Every metadata entry, by key."""
        return dict(self._query("SELECT key, value FROM meta ORDER BY key"))

    def model_identity(self) -> ModelIdentity | None:
        raw = self.meta("model")
        return ModelIdentity(**json.loads(raw)) if raw else None

    def bind_model(self, identity: ModelIdentity) -> None:
        """Record ``identity`` on a store that has none; refuse one made by another model."""
        stored = self.model_identity()
        if stored is None and self.read_only is not None:
            return  # nothing to check it against, and no way to record it
        if stored is None:
            self.set_meta("model", json.dumps(identity.as_dict()))
            # An index built before now has no dimension.
            self._vectors = self._sparse = self._themes = None
        elif stored != identity:
            raise ModelMismatch(
                f"store {self.path} was embedded with {stored.describe()}, but the configured "
                f"model is {identity.describe()}; run `chitta reembed` to re-embed every "
                "memory with the configured model, or configure the store's model again"
            )

    def replace_model(self, identity: ModelIdentity, vectors: dict[str, np.ndarray]) -> None:
        """Swap every vector and the recorded model in one transaction (re-embedding)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO embeddings (memory_id, vector) VALUES (?, ?) ON CONFLICT "
                "(memory_id) DO UPDATE SET vector = excluded.vector",
                ((mid, v.astype(np.float32).tobytes()) for mid, v in vectors.items()),
            )
            conn.execute("DELETE FROM pieces")  # the old model's; the caller embeds them anew
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('model', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (json.dumps(identity.as_dict()),),
            )
        self._vectors = self._sparse = self._themes = None

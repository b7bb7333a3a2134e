"""Vectors: synthetic ones derived from real ones, and the on-disk cache of computed ones."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chitta.bench.scale.settings import NOISE_SD


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def synthetic_vectors(
    base: np.ndarray, count: int, rng: np.random.Generator, noise_sd: float = NOISE_SD
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` unit vectors, each a random row of ``base`` plus Gaussian noise (``noise_sd``
    per dimension), re-normalised; and the index of each one's source row."""
    sources = rng.integers(0, len(base), size=count)
    noise = rng.normal(0.0, noise_sd, size=(count, base.shape[1])).astype(np.float32)
    return unit_rows(base[sources] + noise), sources


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class VectorCache:
    """Vectors by text hash in one ``.npz`` file (``keys``: n×16 bytes, ``vectors``: n×dim;
    ``truncated``: the keys of the texts the model cut to fit, when any was)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: dict[bytes, int] = {}
        self.truncated: set[bytes] = set()
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        if path.is_file():
            with np.load(path) as data:
                keys, self._vectors = data["keys"], data["vectors"]
                cut = data["truncated"] if "truncated" in data.files else []
            self._rows = {k.tobytes(): i for i, k in enumerate(keys)}
            self.truncated = {k.tobytes() for k in cut}
        self._new_keys: list[bytes] = []
        self._new: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._rows) + len(self._new_keys)

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray | None, list[int]]:
        """(vectors of ``texts``, rows left zero where missing; positions of the missing)."""
        if not self._rows:
            return None, list(range(len(texts)))
        out = np.zeros((len(texts), self._vectors.shape[1]), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            row = self._rows.get(text_key(text))
            if row is None:
                missing.append(i)
            else:
                out[i] = self._vectors[row]
        return out, missing

    def add(
        self, texts: Sequence[str], vectors: np.ndarray, truncated: Sequence[bool] = ()
    ) -> None:
        known = set(self._rows) | set(self._new_keys)
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            key = text_key(text)
            if i < len(truncated) and truncated[i]:
                self.truncated.add(key)
            if key not in known:
                known.add(key)
                self._new_keys.append(key)
                self._new.append(np.asarray(vector, dtype=np.float32))

    def save(self) -> None:
        """Write the cache, first taking in what another process added to the file since it
        was read (runs may share one cache), through a file of this process's own."""
        if not self._new_keys:
            return
        if self.path.is_file():
            on_disk = VectorCache(self.path)
            theirs = [k for k in on_disk._rows if k not in self._rows]
            self.truncated |= on_disk.truncated
            if theirs:
                kept = [(k, v) for k, v in zip(self._new_keys, self._new, strict=True)
                        if k not in on_disk._rows]  # fmt: skip
                mine, keep = [k for k, _ in kept], [v for _, v in kept]
                self._rows, self._vectors = on_disk._rows, on_disk._vectors
                self._new_keys, self._new = mine, keep
                if not mine:
                    return
        keys = [*self._rows, *self._new_keys]
        new = np.stack(self._new)
        vectors = np.concatenate([self._vectors, new]) if len(self._rows) else new
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        cut = np.frombuffer(b"".join(sorted(self.truncated)), dtype=np.uint8).reshape(-1, 16)
        np.savez(tmp, keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, 16),
                 vectors=vectors, truncated=cut)  # fmt: skip
        tmp.replace(self.path)
        self._rows = {k: i for i, k in enumerate(keys)}
        self._vectors, self._new_keys, self._new = vectors, [], []

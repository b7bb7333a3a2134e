"""The embedder interface every backend implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """What made a store's vectors: recorded with the store, compared on every open."""

    name: str
    dim: int
    hash: str  # sha256 of the weights (local) or of backend+url+model (remote)

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "dim": self.dim, "hash": self.hash}

    def describe(self) -> str:
        return f"{self.name} (dim {self.dim}, {self.hash[:12]})"


@dataclass(frozen=True, slots=True)
class Embedding:
    """Unit-length vectors for a batch of texts, and which texts were cut to fit the model."""

    vectors: np.ndarray  # float32, shape (n, dim), rows L2-normalised
    truncated: tuple[bool, ...]


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    def identity(self) -> ModelIdentity: ...

    def embed(self, texts: list[str]) -> Embedding: ...

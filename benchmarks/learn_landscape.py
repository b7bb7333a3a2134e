"""How recall answers to the learner's parameters near the preset (issue 21, part 1): each
development set's tuning and held-out halves measured with one parameter set by hand.

    python benchmarks/learn_landscape.py OUT.json [--data FILE] [--vector-cache DIR]

What `chitta bench learn` reports is read against this: a learned mean a little off the
preset moves the held-out figures by what moving it by hand does. Not part of chitta; the
figures are in docs/benchmarks.md ("Does learning pay?").
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from chitta.bench import environment, locomo
from chitta.bench import learn as bl
from chitta.bench.devsets import bench_embedder
from chitta.bench.runner import realm_for
from chitta.bench.systems.chitta import ChittaStore
from chitta.learn.learner import Learner
from chitta.learn.params import apply

#: The settings tried: the preset, then one parameter moved at a time.
SETTINGS: tuple[Mapping[str, float], ...] = (
    {},
    {"balance": 0.45},
    {"balance": 0.488},
    {"balance": 0.52},
    {"balance": 0.55},
    {"lane:ctx": 0.8},
    {"lane:ctx": 1.2},
    {"lane:common": 0.5},
    {"lane:common": 1.5},
)


class Fixed(Learner):
    """A learner that sets the same values for every recall (and learns nothing)."""

    def __init__(self, store, values: Mapping[str, float]) -> None:  # noqa: ANN001
        super().__init__(store)
        self.values = values

    def tune(self, realm, strategy, config, query, context, *, explore):  # noqa: ANN001, ANN201
        return apply(config, self.values), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--data", type=Path, action="append")
    parser.add_argument("--vector-cache", type=Path)
    args = parser.parse_args()
    default = environment.default_locomo()
    files = args.data or [default, default.with_name("longmemeval_s_dev60.json")]
    embedder = bench_embedder(args.vector_cache)
    started, results = time.time(), []
    for path in files:
        tune, held = locomo.load(path, select="tune"), locomo.load(path, select="held-out")
        with tempfile.TemporaryDirectory(prefix="chitta-landscape-") as tmp:
            store = ChittaStore(Path(tmp) / "h", embedder)
            try:
                for conversation in (*tune.conversations, *held.conversations):
                    store.load(realm_for(conversation.sample_id), conversation)
                chitta = store.open()
                for values in SETTINGS:
                    chitta.learner = Fixed(chitta.store, values)
                    row = {"data": path.name, "values": dict(values),
                           "tune": bl.measure(store, bl.questions(tune)),
                           "held_out": bl.measure(store, bl.questions(held))}  # fmt: skip
                    print(json.dumps(row), flush=True)
                    results.append(row)
            finally:
                store.close()
    record = {"benchmark": "learn-landscape", "commit": environment.git_commit(),
              "machine": {**environment.machine(), "loadavg": environment.loadavg()},
              "wall_s": round(time.time() - started, 1), "rows": results}  # fmt: skip
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

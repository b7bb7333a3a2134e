"""The keyword search's best-k answer (MaxScore, store/sqlite/keywords.py) against scoring
every holder, on a scale benchmark's store and queries: for each query and k, whether the
places the search calls final hold the same rowids and the same float scores, and whether
it left holders out. For issue 24's parity figure beside the tests' random stores.

    python benchmarks/keyword_parity.py <workdir>/n100000/recall.spec.json

The spec is what `chitta bench scale --workdir` keeps for each N (its home and queries).
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

KS = (1, 10, 40, 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    args = parser.parse_args()
    spec = json.loads(args.spec.read_text(encoding="utf-8"))

    import numpy as np

    from chitta.bench.scale.settings import REALM
    from chitta.recall.config import preset
    from chitta.recall.query import plan_query
    from chitta.store.backends import open_store
    from chitta.store.sqlite import keywords

    store = open_store(Path(spec["home"]) / "default.db", create=False)
    try:
        stats, rows = store.term_stats(), store._rows()
        common = preset("hybrid").common_fraction
        searches = differ = left_out = 0
        for query in spec["queries"]:
            plan = plan_query(query, partial(stats.df, REALM), stats.size(REALM), common)
            whole = keywords.search(store._query, rows, plan.terms, [REALM])
            for k in KS:
                best = keywords.search(store._query, rows, plan.terms, [REALM], k=k)
                final = best.exact
                same = (
                    final >= min(k, len(whole.rowids))
                    and np.array_equal(best.rowids[:final], whole.rowids[:final])
                    and np.array_equal(best.scores[:final], whole.scores[:final])
                )
                searches += 1
                differ += not same
                left_out += not best.whole
    finally:
        store.close()
    print(json.dumps({"queries": len(spec["queries"]), "k": KS, "searches": searches,
                      "differ": differ, "left_holders_out": left_out}))  # fmt: skip


if __name__ == "__main__":
    main()

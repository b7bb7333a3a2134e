"""Several clients at once, each in its own thread, mixing remember, recall, forget, status
and triplets: no request fails, and every acknowledged write reads back through the daemon
afterwards (forgotten memories as forgotten)."""

from __future__ import annotations

import random
import threading

from chitta.bench import hostile
from chitta.bench.fault import Served
from chitta.daemon.client import DaemonClient

CLIENTS, STEPS = 6, 60


def test_mixed_concurrent_clients_get_answers_and_keep_their_writes(
    shared: Served, serves_normally
) -> None:
    acks, tally = hostile.Acks(), hostile.Tally()

    def client(n: int) -> None:
        c = hostile.MixedClient(shared.socket, f"m{n}", random.Random(n), acks, tally)
        for _ in range(STEPS):
            c.step()
        c.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    outcomes = tally.as_dict()
    assert sum(outcomes.values()) == CLIENTS * STEPS
    assert all(k.endswith(":ok") for k in outcomes), outcomes
    assert {k.split(":")[0] for k in outcomes} >= {
        "remember",
        "recall",
        "forget",
        "add_triplet",
        "memory_status",
    }, outcomes
    with DaemonClient(shared.socket) as reader:
        for memory_id, realm in acks.remembered.items():
            memory = reader.call("get_memory", id=memory_id)["memory"]  # forgotten ones too
            assert memory["realm"] == realm
            assert (memory["deleted_at"] is not None) is (memory_id in acks.forgotten), memory
        realms = set(acks.triplets.values())
        found = {t["id"] for realm in realms for t in
                 reader.call("find_triplets", realm=realm, limit=1000)["triplets"]}  # fmt: skip
        assert set(acks.triplets) <= found
    serves_normally(shared)

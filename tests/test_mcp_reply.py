"""The compact recall reply names a possibly outdated row once, and only what the model sees."""

from __future__ import annotations

from chitta.mcp.reply import compact_code, compact_recall, lean, outdated

NOW = 1_700_000_000_000


def _hit(id_: str, **fields: object) -> dict:
    return {"id": id_, "kind": "episode", "content": f"text {id_}", "realm": "me",
            "created_at": "2023-11-14T22:00:00Z", **fields}  # fmt: skip


def test_a_row_names_its_newer_one_only_when_that_one_is_shown_or_recorded() -> None:
    hits = [_hit("new"), _hit("old", newer="new"), _hit("gone", newer="absent"),
            _hit("sup", newer="elsewhere", superseded_by="elsewhere")]  # fmt: skip
    assert outdated(hits) == {"old": "new", "sup": "elsewhere"}
    reply = compact_recall({"ok": True, "hits": hits}, realm="me", now_ms=NOW)
    assert reply["newer"] == {"old": "new", "sup": "elsewhere"}
    assert all(len(row) == 4 for row in reply["hits"])  # the rows themselves are unchanged


def test_no_update_adds_nothing() -> None:
    reply = compact_recall({"ok": True, "hits": [_hit("a"), _hit("b")]}, realm="me", now_ms=NOW)
    assert "newer" not in reply


def _symbol(qualified: str, path: str, line: int, repo: str = "/r/shop") -> dict:
    return {
        "id": "sym_" + qualified,
        "name": qualified.rpartition(".")[2],
        "qualified": qualified,
        "kind": "function",
        "signature": f"def {qualified}()",
        "repo": repo,
        "path": path,
        "start_line": line,
        "end_line": line + 1,
        "parent": None,
        "language": "python",
        "doc": "Long docs.",
        "commit": "abc",
    }


def test_a_code_reply_is_rows_without_ids_docs_or_commits() -> None:
    found = {
        "ok": True,
        "op": "find",
        "realm": "shop",
        "symbols": [_symbol("shop.price", "shop.py", 3)],
    }
    assert compact_code(found) == {
        "ok": True,
        "symbols": [["shop.price", "shop.py:3", "function", "def shop.price()"]],
    }
    walk = {
        "ok": True,
        "op": "callers",
        "realm": "shop",
        "depth": 2,
        "more_symbols": 0,
        "pending_calls": 4,
        "symbols": [
            {
                "symbol": _symbol("shop.price", "shop.py", 3),
                "cut": True,
                "callers": [
                    {
                        "depth": 1,
                        "symbol": {"id": "x", "qualified": "a.b"},
                        "call": {"path": "a.py", "line": 9},
                    }
                ],
            }
        ],
    }
    assert compact_code(walk) == {
        "ok": True,
        "pending_calls": 4,
        "symbols": [
            {
                "symbol": ["shop.price", "shop.py:3", "function", "def shop.price()"],
                "callers": [["a.b", "a.py:9", 1]],
                "cut": True,
            }
        ],
    }
    assert compact_code({"ok": True, "op": "outline", "outline": "a.py: f()", "of": 3}) == {
        "ok": True,
        "outline": "a.py: f()",
    }


def test_a_code_reply_over_several_repositories_names_each_folder() -> None:
    two = {
        "ok": True,
        "op": "search",
        "symbols": [_symbol("a.f", "a.py", 1, "/r/one"), _symbol("b.g", "b.py", 2, "/r/two/")],
    }
    assert [row[1] for row in compact_code(two)["symbols"]] == ["one/a.py:1", "two/b.py:2"]


def test_a_code_reply_of_an_unknown_shape_is_passed_on_whole() -> None:
    odd = {"ok": True, "symbols": [{"symbol": "x"}]}  # no op: not a shape to cut down
    assert compact_code(odd) == odd


def test_a_remember_reply_says_only_what_is_news() -> None:
    full = {"ok": True, "id": "01A", "deduplicated": False, "similarity": None, "burst": False,
            "truncated": False, "supersedes": None}  # fmt: skip
    assert lean("remember", full, realm="r", verbose=False, now_ms=0) == {"ok": True, "id": "01A"}
    folded = {**full, "deduplicated": True, "similarity": 0.93, "burst": True}
    assert lean("remember", folded, realm="r", verbose=False, now_ms=0) == {
        "ok": True, "id": "01A", "deduplicated": True, "similarity": 0.93, "burst": True,
    }  # fmt: skip


def test_a_recall_says_how_many_memories_wait_for_their_vectors() -> None:
    from chitta.mcp.reply import compact_recall

    out = compact_recall({"ok": True, "hits": [], "unembedded": 1}, realm="d", now_ms=0)
    assert (
        out["pending"]
        == "1 memory stored moments ago is found by its words only until it is embedded"
    )
    assert "pending" not in compact_recall({"ok": True, "hits": []}, realm="d", now_ms=0)

"""The compact recall reply names a possibly outdated row once, and only what the model sees."""

from __future__ import annotations

from chitta.mcp.reply import compact_recall, outdated

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

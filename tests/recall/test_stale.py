"""Memories that know the code moved (code/links.py, code/stale.py), end to end on both
backends: a real git repository made here, indexed with the real tree-sitter extractor at
each commit; memories remembered through the API; recall's ``possibly_stale`` marks, their
commit ranges and their rank, now and ``as_of_commit``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chitta.code.index import index_path
from chitta.errors import CommitNotIndexed
from chitta.mcp.reply import compact_recall
from chitta.recall.scoring import STALE_FACTOR
from chitta.wire import result_from_dict, result_to_dict

pytest.importorskip("tree_sitter_python")

CART_V1 = """class Cart:
    def total(self, items):
        return sum(item.price for item in items)

    def discount(self, amount):
        return amount * 0.9


def parse_tags(text):
    return [t.strip() for t in text.split(",")]
"""
# Commit 2 changes Cart.discount and moves every line down; commit 3 changes Cart.total's body.
CART_V2 = "# Prices are in cents.\n\n" + CART_V1.replace("amount * 0.9", "amount * 0.8")
CART_V3 = CART_V2.replace("sum(item.price for item in items)",
                          "round(sum(item.price * item.count for item in items), 2)")  # fmt: skip
STALE_TEXT = "The shop's Cart.total adds up the prices of the items in the basket."
FRESH_TEXT = "The shop's parse_tags splits the tag list of the items in the basket."
QUERY = "shop items in the basket"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def commit(root: Path, text: str, message: str) -> str:
    (root / "shop").mkdir(exist_ok=True)
    (root / "shop" / "cart.py").write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop-repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    return root


def hit_of(result, memory_id: str):
    return next(h for h in result.hits if h.memory.id == memory_id)


def test_a_changed_body_marks_its_memories_and_ranks_them_lower(chitta, repo: Path) -> None:
    c1 = commit(repo, CART_V1, "first")
    index_path(chitta.store, "work", repo)
    stale = chitta.remember(STALE_TEXT, realm="work").id
    fresh = chitta.remember(FRESH_TEXT, realm="work").id
    code = chitta.store.code()
    links = {s.link.memory_id: s.link for s in code.links_of("work", [stale, fresh])}
    assert links[stale].qualified.endswith("Cart.total") and links[stale].commit == c1
    assert links[fresh].qualified.endswith("parse_tags")

    # rrf: two memories of about equal relevance score about equally (rsf stretches this
    # realm's two well apart), so the bounded step of the mark decides their order.
    before = chitta.recall(QUERY, realm="work", limit=5, fusion="rrf")
    assert before.stale == {}
    # Unmarked, the memory that names Cart.total ranks first for this query.
    assert [h.memory.id for h in before.hits][:2] == [stale, fresh]

    # A change elsewhere in the file marks nothing.
    c2 = commit(repo, CART_V2, "discount")
    index_path(chitta.store, "work", repo)
    assert chitta.recall(QUERY, realm="work", limit=5).stale == {}

    c3 = commit(repo, CART_V3, "total counts items")
    report = index_path(chitta.store, "work", repo)
    assert report.commit == c3
    result = chitta.recall(QUERY, realm="work", limit=5, fusion="rrf")
    assert set(result.stale) == {stale}
    (mark,) = result.stale[stale]
    assert (mark.change, mark.since, mark.until) == ("changed", c1, c3)
    assert mark.qualified.endswith("Cart.total") and mark.path == "shop/cart.py"
    # Ranked a bounded step below the unchanged memory of (near) equal relevance.
    s, f = hit_of(result, stale), hit_of(result, fresh)
    assert s.factors["stale"] == STALE_FACTOR and "stale" not in f.factors
    assert s.final == pytest.approx(s.score * s.factors["product"] * STALE_FACTOR)
    assert abs(s.score - f.score) / f.score < 1 - STALE_FACTOR  # equally relevant, nearly
    ids = [h.memory.id for h in result.hits]
    assert ids[:2] == [fresh, stale]  # the mark moved it below

    # The JSON carries the detail, the agent's shapes one short note.
    data = result_to_dict(result)
    row = next(h for h in data["hits"] if h["id"] == stale)
    assert row["possibly_stale"][0]["since_commit"] == c1
    assert row["possibly_stale"][0]["until_commit"] == c3
    assert result_from_dict(data).stale[stale][0] == mark
    note = compact_recall({"ok": True, **data}, realm="work", now_ms=0)["stale"]
    assert note == {stale: f"possibly stale: {mark.qualified} changed since {c1[:8]}..{c3[:8]}"}

    # As of the first and second commits' indexes, it was fresh; as of the third, stale.
    assert chitta.recall(QUERY, realm="work", as_of_commit=c1).stale == {}
    assert chitta.recall(QUERY, realm="work", as_of_commit=c2[:10]).stale == {}
    assert chitta.recall(QUERY, realm="work", as_of_commit="HEAD~1").stale == {}
    then = chitta.recall(QUERY, realm="work", as_of_commit=c3)
    assert [(m.since, m.until) for m in then.stale[stale]] == [(c1, c3)]


def test_a_commit_never_indexed_is_ordered_by_git_and_unknown_ones_refused(
    chitta, repo: Path
) -> None:
    c1 = commit(repo, CART_V1, "first")
    index_path(chitta.store, "work", repo)
    stale = chitta.remember(STALE_TEXT, realm="work").id
    c2 = commit(repo, CART_V3, "total changed, not indexed at once")
    c3 = commit(repo, CART_V3 + "\n# more\n", "a comment")
    index_path(chitta.store, "work", repo)
    # c2 was never indexed: the newest index at or before it is c1's (git says c1 is an
    # ancestor of c2): fresh then. At c3's own index the body had changed.
    assert chitta.recall(QUERY, realm="work", as_of_commit=c2).stale == {}
    assert set(chitta.recall(QUERY, realm="work", as_of_commit=c3).stale) == {stale}
    with pytest.raises(CommitNotIndexed):
        chitta.recall(QUERY, realm="work", as_of_commit="0" * 40)
    with pytest.raises(CommitNotIndexed):
        chitta.recall(QUERY, realm="work", as_of_commit="--all")
    assert c1 != c2


def test_an_index_links_the_memories_remembered_before_it(chitta, repo: Path) -> None:
    older = chitta.remember(STALE_TEXT, realm="work").id
    plain = chitta.remember("We run the tests and get the total before lunch.", realm="work").id
    commit(repo, CART_V1, "first")
    report = index_path(chitta.store, "work", repo)
    assert report.linked == 1
    links = chitta.store.code().links_of("work", [older, plain])
    assert [(s.link.memory_id, s.link.qualified.rpartition(".")[2]) for s in links] == [
        (older, "total")
    ]
    # Indexing again links nothing twice, and a removed symbol marks its memory.
    assert index_path(chitta.store, "work", repo).linked == 0
    commit(repo, CART_V1.replace("def total", "def grand_total"), "renamed")
    index_path(chitta.store, "work", repo)
    (mark,) = chitta.recall(QUERY, realm="work").stale[older]
    assert mark.change == "removed" and mark.path is None


def test_the_stale_factor_stands_outside_the_clamp(make_memory) -> None:
    """A product already at its bound cannot hide the mark: equal relevance, lower score."""
    from dataclasses import replace

    from chitta.recall.scoring import score
    from chitta.recall.scoring_config import DEFAULT

    strong = replace(make_memory("a well-used memory"), strength=1.0)
    config = replace(DEFAULT, bounds_max=1.0)
    plain = score(1.0, strong, None, 1, strong.created_at, config)
    marked = score(1.0, strong, None, 1, strong.created_at, config, stale=True)
    assert plain.product == marked.product == 1.0  # clamped
    assert marked.final == pytest.approx(plain.final * STALE_FACTOR)
    assert "stale" not in plain.factors and marked.factors["stale"] == STALE_FACTOR


def test_a_file_re_index_marks_at_once_with_its_own_commit(chitta, repo: Path) -> None:
    """The post-edit hook's re-index of one file: the mark shows at once, its range ending at
    the commit that re-index recorded (no whole index ran since)."""
    from chitta.code.reindex import reindex_paths

    c1 = commit(repo, CART_V1, "first")
    index_path(chitta.store, "work", repo)
    stale = chitta.remember(STALE_TEXT, realm="work").id
    c2 = commit(repo, CART_V3, "total counts items")
    reindex_paths(chitta.store, "work", [str((repo / "shop" / "cart.py").resolve())])
    (mark,) = chitta.recall(QUERY, realm="work").stale[stale]
    assert (mark.since, mark.until) == (c1, c2)
    # --as-of-commit reads index runs: the only one is c1's, where it was fresh.
    assert chitta.recall(QUERY, realm="work", as_of_commit=c1).stale == {}

"""Seed 001's query-context features and the learner's buckets (learn/context.py)."""

from __future__ import annotations

import pytest

from chitta.learn.context import query_context


def ctx(query: str, terms: int | None = None, df: int = 0, size: int = 1000):
    words = query.split() if terms is None else [f"w{i}" for i in range(terms)]
    return query_context(query, words, lambda _: df, size)


@pytest.mark.parametrize(
    ("query", "bucket"),
    [
        ("deploys", "short.prose.plain.rare"),
        ("what does parse_tags return", "mid.code.plain.rare"),
        ("infra: where do deploys go", "mid.prose.prefixed.rare"),
        ("[billing] which port", "short.prose.prefixed.rare"),
        ("how did the team decide on the new release schedule last spring",
         "long.prose.plain.rare"),
    ],
)  # fmt: skip
def test_buckets(query: str, bucket: str) -> None:
    assert ctx(query, len(query.split()) - 1 if query.startswith(("infra", "[")) else None
               ).bucket == bucket  # fmt: skip


def test_the_term_frequency_feature() -> None:
    assert ctx("alpha beta", df=50, size=1000).term_share == pytest.approx(0.05)
    assert ctx("alpha beta", df=50, size=1000).bucket.endswith(".common")
    assert ctx("alpha beta", df=1, size=1000).bucket.endswith(".rare")


def test_an_empty_realm_or_no_terms_is_rare() -> None:
    assert ctx("?", terms=0).term_share == 0.0
    assert query_context("x y", ["x"], lambda _: 3, 0).term_share == 0.0


def test_features_are_reported() -> None:
    c = ctx("what does `Cart.total()` return")
    assert c.technical and not c.prefixed and c.length == len("what does `Cart.total()` return")

"""The first recall: dense + keyword lanes fused by RRF, scoped, with lane provenance."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.config import Settings
from chitta.errors import BadArgument


@pytest.fixture
def stocked(chitta: Chitta) -> Chitta:
    for text, tags in [
        ("We chose SQLite WAL over a custom log because crash recovery comes free", "storage"),
        ("The deploy script lives in ops/deploy.sh and needs the VPN", "ops"),
        ("Alice prefers tabs over spaces in Python code", "style"),
        ("The quarterly report is due on the first Monday of March", "calendar"),
        ("Zebra-7 is the codename of the billing migration project", "billing"),
    ]:
        chitta.remember(text, realm="demo", tags=tags)
    return chitta


def test_hits_carry_lanes_ranks_and_raw_scores(stocked: Chitta) -> None:
    result = stocked.recall("why not our own write-ahead log?", realm="demo")
    top = result.hits[0]
    assert "SQLite WAL" in top.memory.content
    assert set(top.lanes) == {"sem", "kw"}
    assert top.lanes["sem"].rank == 1 and 0 < top.lanes["sem"].raw <= 1
    assert top.lanes["kw"].raw > 0
    assert top.score == pytest.approx(sum(h.contribution for h in top.lanes.values()))
    assert result.lanes_run == ("sem", "kw", "tag")


def test_keyword_lane_finds_an_exact_identifier(stocked: Chitta) -> None:
    result = stocked.recall("Zebra-7", realm="demo", strategy="keyword")
    assert result.hits[0].memory.content.startswith("Zebra-7")
    assert set(result.hits[0].lanes) == {"kw"}


def test_strategies_and_ablation_choose_lanes(stocked: Chitta) -> None:
    assert stocked.recall("tabs", realm="demo", strategy="semantic").lanes_run == ("sem",)
    assert stocked.recall("tabs", realm="demo", ablate=["sem"]).lanes_run == ("kw", "tag")
    with pytest.raises(BadArgument, match="strategy"):
        stocked.recall("tabs", realm="demo", strategy="psychic")
    with pytest.raises(BadArgument, match="lane"):
        stocked.recall("tabs", realm="demo", ablate=["nope"])


def test_limit_and_empty_query(stocked: Chitta) -> None:
    assert len(stocked.recall("project", realm="demo", limit=2).hits) == 2
    with pytest.raises(BadArgument, match="limit"):
        stocked.recall("project", realm="demo", limit=0)
    with pytest.raises(BadArgument, match="empty"):
        stocked.recall("   ", realm="demo")


def test_fts_syntax_in_a_query_is_just_text(stocked: Chitta) -> None:
    result = stocked.recall('deploy" OR NEAR(( * "', realm="demo", strategy="keyword")
    assert "deploy" in result.hits[0].memory.content


def test_forgotten_and_superseded_memories_are_not_recalled(stocked: Chitta) -> None:
    old = stocked.recall("deploy script", realm="demo").hits[0].memory
    new = stocked.remember(
        "The deploy script moved to tools/ship.sh and no longer needs the VPN",
        realm="demo",
        supersedes=old.id,
    )
    ids = [h.memory.id for h in stocked.recall("deploy script", realm="demo").hits]
    assert new.id in ids and old.id not in ids
    both = stocked.recall("deploy script", realm="demo", include_superseded=True)
    assert old.id in [h.memory.id for h in both.hits]
    stocked.forget(new.id)
    assert new.id not in [h.memory.id for h in stocked.recall("deploy", realm="demo").hits]


def test_other_realm_is_empty(stocked: Chitta) -> None:
    assert stocked.recall("SQLite", realm="elsewhere").hits == ()


WORDS = ["sqlite", "deploy", "alice", "tabs", "report", "zebra", "vpn", "billing"]
scopes = st.tuples(st.sampled_from(["r1", "r2"]), st.sampled_from(["", "a1", "a2"]),
                   st.sampled_from(["", "c1"]))  # fmt: skip
memories = st.lists(
    st.tuples(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4), scopes),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    memories,
    st.sampled_from(WORDS),
    st.sampled_from(["r1", "r2"]),
    st.sampled_from([None, "a1", "a2"]),
    st.sampled_from([None, "c1", ""]),
    st.sampled_from(["hybrid", "semantic", "keyword"]),
)
def test_recall_never_leaks_across_scopes(
    embedder, items, query, realm, agent, channel, strategy
) -> None:
    """Property: whatever is stored where, a scoped recall returns only that scope."""
    if channel == "":
        channel = None
    with (
        tempfile.TemporaryDirectory() as home,
        Chitta.open(Settings(home=Path(home)), embedder=embedder) as c,
    ):
        for words, (r, a, ch) in items:
            c.remember(
                "note about " + " ".join(words), realm=r, agent_id=a or None, channel=ch or None
            )
        result = c.recall(query, realm=realm, agent_id=agent, channel=channel,
                          strategy=strategy, limit=50)  # fmt: skip
        for hit in result.hits:
            m = hit.memory
            assert m.realm == realm
            assert agent is None or m.agent_id == agent
            assert channel is None or m.channel == channel


def test_a_speakers_name_in_every_memory_does_not_drown_the_question(chitta: Chitta) -> None:
    topics = ["painted a sunset by the lake", "adopted a grey kitten", "ran a marathon in May",
              "started a pottery class", "visited her grandmother in Sweden",
              "planted tomatoes in the garden", "read a book about volcanoes",
              "fixed the old bicycle", "baked sourdough bread", "learned to play chess",
              "went camping in the mountains", "wrote a poem about the sea",
              "bought a new guitar", "watched a meteor shower", "cooked a curry for friends",
              "joined a choir", "repaired the roof", "took a photography course",
              "volunteered at the shelter", "sewed a quilt",
              "went to a support group meeting"]  # fmt: skip
    for topic in topics:
        chitta.remember(f"Caroline: Yesterday I {topic}.", realm="chat", kind="episode")
    result = chitta.recall("When did Caroline go to the support group?", realm="chat",
                           strategy="semantic")  # fmt: skip
    assert result.plan is not None and result.plan.common == ("caroline",)
    assert "support group" in result.hits[0].memory.content


def test_tag_lane_finds_a_memory_by_its_tags(chitta: Chitta) -> None:
    tagged = chitta.remember("We picked the embedded engine for crash safety", realm="t",
                             tags="storage,decision").id  # fmt: skip
    chitta.remember("The office moves to the third floor in June", realm="t", tags="office")
    result = chitta.recall("storage", realm="t", strategy="hybrid")
    hit = next(h for h in result.hits if h.memory.id == tagged)
    assert "tag" in hit.lanes and "kw" in hit.lanes  # FTS indexes tags too
    assert result.hits[0].memory.id == tagged
    ablated = chitta.recall("storage", realm="t", ablate=["tag"])
    assert "tag" not in ablated.lanes_run

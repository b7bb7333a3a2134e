"""The first recall: dense + keyword lanes fused by RRF, scoped, with lane provenance."""

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chitta.api import Chitta
from chitta.config import Settings
from chitta.errors import BadArgument, BadScope


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
    assert result.lanes_run == ("sem", "kw", "tag", "ctx", "common", "code", "when", "dated")


def test_keyword_lane_finds_an_exact_identifier(stocked: Chitta) -> None:
    result = stocked.recall("Zebra-7", realm="demo", strategy="keyword")
    assert result.hits[0].memory.content.startswith("Zebra-7")
    assert set(result.hits[0].lanes) == {"kw"}


def test_strategies_and_ablation_choose_lanes(stocked: Chitta) -> None:
    assert stocked.recall("tabs", realm="demo", strategy="semantic").lanes_run == ("sem",)
    ablated = stocked.recall("tabs", realm="demo", ablate=["sem", "ctx", "common"])
    assert ablated.lanes_run == ("kw", "tag", "code", "when", "dated")
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


def _conversation(chitta: Chitta, turns: list[str], roles: list[str] | None = None) -> list[str]:
    """Import ``turns`` as one episode in realm ``chat`` (each with its role from ``roles``,
    as the hooks record a session, when given); their ids in order."""
    import json

    from chitta.store.ids import new_id
    from chitta.transfer import import_jsonl

    episode = new_id()
    sources = [{"role": r} for r in roles] if roles else [{}] * len(turns)
    lines = [json.dumps({"type": "episode", "id": episode, "realm": "chat", "title": "t",
                         "started_at": "2026-05-01T10:00:00Z"})]  # fmt: skip
    lines += [json.dumps({"type": "memory", "kind": "episode", "content": t, "realm": "chat",
                          "episode_id": episode, "source": source})
              for t, source in zip(turns, sources, strict=True)]  # fmt: skip
    import_jsonl(chitta, lines)
    return [m.id for m in chitta.store.iter_memories(realm="chat")]


def test_ctx_brings_the_answer_in_the_turn_after_the_match(chitta: Chitta) -> None:
    ids = _conversation(chitta, [
        "Ana: Did you finally make it to the Lofoten islands in June?",
        "Ben: Yes! We kayaked between the fjords for four whole days.",
        "Ana: My sister is learning the cello this year.",
        "Ben: Our neighbours painted their fence bright green.",
        "Ana: The bakery downtown now sells rye sourdough loaves.",
    ])  # fmt: skip
    result = chitta.recall("Lofoten islands", realm="chat", limit=3, strategy="hybrid")
    lanes = {h.memory.id: h.lanes for h in result.hits}
    assert result.hits[0].memory.id == ids[0]
    assert "ctx" in lanes[ids[1]]  # one turn after the match: "Yes! We kayaked..."
    ablated = chitta.recall("Lofoten islands", realm="chat", limit=3, ablate=["ctx"])
    assert all("ctx" not in h.lanes for h in ablated.hits)


def test_ctx_starts_from_the_users_turn_not_the_assistants_echo_of_it(chitta: Chitta) -> None:
    # The assistant's reply repeats the question's words (the keyword lane finds it first);
    # seeded in the plain fused order, ctx's share for its best seed lifted the echo above
    # the user's turn that holds the answer, past what the provenance factor takes off it.
    ids = _conversation(chitta, [
        "I adopted Pixel, a grey kitten, from the Maple Street shelter on 3 April, after "
        "weeks of visits.",
        "You adopted the kitten Pixel from the Maple Street shelter! Adopting a shelter "
        "kitten like Pixel is kind.",
        "The animal shelter on Oak Road is looking for volunteers.",
        "Volunteering at a shelter is a good way to meet people.",
        "Can you suggest a weekly meal plan with more vegetables?",
        "Here is a weekly meal plan with a vegetable dish every day.",
    ], roles=["user", "assistant"] * 3)  # fmt: skip
    query = "When did I adopt the kitten Pixel from the Maple Street shelter?"
    result = chitta.recall(query, realm="chat", limit=3)
    assert [h.memory.id for h in result.hits[:2]] == [ids[0], ids[1]]
    assert result.hits[0].lanes["ctx"].rank == 1  # the lane's best seed
    # With the scoring stage off nothing weighs the roles: the seeds are the fused order.
    plain = chitta.recall(query, realm="chat", limit=3, ablate=["scoring"])
    assert plain.hits[0].memory.id == ids[1]


def test_a_question_about_what_the_agent_said_trusts_its_replies_as_the_users(
    chitta: Chitta,
) -> None:
    # Asked what the agent recommended, the agent's recorded reply is the evidence sought:
    # the provenance factor that ranks its words below the user's does not apply.
    ids = _conversation(chitta, [
        "I made a coffee table from recycled pallet wood and need a sealant.",
        "For recycled pallet wood, a water-based polyurethane sealant works well.",
        "Can you suggest a weekly meal plan with more vegetables?",
        "Here is a weekly meal plan with a vegetable dish every day.",
    ], roles=["user", "assistant"] * 2)  # fmt: skip

    def provenance(query: str) -> float:
        hits = chitta.recall(query, realm="chat", limit=3).hits
        return next(h for h in hits if h.memory.id == ids[1]).factors["provenance"]

    assert provenance("Which sealant did you recommend for my pallet wood table?") == 1.0
    assert provenance("Which sealant suits pallet wood?") == 0.8
    chitta.scoring = replace(chitta.scoring, asked_agent_trust=None)
    assert provenance("Which sealant did you recommend for my pallet wood table?") == 0.8


def test_common_query_words_tip_the_order_among_candidates(chitta: Chitta) -> None:
    turns = [f"{who}: I went {what} last weekend" for who, what in
             [("Ana", "hiking up the ridge"), ("Ben", "hiking by the lake")]]  # fmt: skip
    turns += [f"{who}: filler line number {i} about nothing" for i in range(30)
              for who in ("Ana", "Ben")]  # fmt: skip
    ids = _conversation(chitta, turns)
    result = chitta.recall("Where did Ben go hiking?", realm="chat", limit=5)
    assert result.plan is not None and "ben" in result.plan.common
    top = result.hits[0]
    assert top.memory.id == ids[1] and "common" in top.lanes
    plain = chitta.recall("Where did Ben go hiking?", realm="chat", limit=5, ablate=["common"])
    assert all("common" not in h.lanes for h in plain.hits)


def test_a_session_primes_recall_with_what_it_stored(chitta: Chitta) -> None:
    from chitta.store.records import Source

    mine = chitta.remember("The staging database password rotates every Monday",
                           realm="ops", source=Source(session="s-42"))  # fmt: skip
    chitta.remember("The production database is backed up nightly to cold storage", realm="ops")
    primed = chitta.recall("database", realm="ops", session="s-42")
    hit = next(h for h in primed.hits if h.memory.id == mine.id)
    assert "ctx" in hit.lanes
    unprimed = chitta.recall("database", realm="ops")
    assert all("ctx" not in h.lanes for h in unprimed.hits)
    with pytest.raises(BadScope, match="session"):
        chitta.recall("database", realm="ops", session="bad session name!")

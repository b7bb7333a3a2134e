"""The benchmarked systems on a small conversation, run through the real runner."""

from pathlib import Path

import pytest

from chitta.bench.locomo import LONGMEMEVAL, Conversation, Dataset, Question, Turn
from chitta.bench.runner import run
from chitta.bench.systems.bm25 import Bm25System, tokens
from chitta.bench.systems.chitta import ChittaStore, ChittaSystem
from chitta.bench.systems.dense import DenseSystem
from chitta.errors import BadArgument

LINES = [
    "Ann: We moved the database to SQLite with WAL mode last week.",
    "Bob: My dog Rex loves chasing tennis balls in the park.",
    "Ann: The quarterly report is due on the first Monday of March.",
    "Bob: I started learning the violin after my birthday.",
    "Ann: Bye!",
]
TURNS = tuple(
    Turn(f"D1:{i + 1}", 1, line.split(": ")[0], line.split(": ", 1)[1], None, 1_700_000_000_000)
    for i, line in enumerate(LINES)
)
QUESTIONS = (
    Question("mini", 0, "What does Rex like chasing?", 4, ("D1:2",)),
    Question("mini", 1, "When is the quarterly report due?", 2, ("D1:3",)),
    Question("mini", 2, "Unanswerable", 5, ()),
)
DATA = Dataset("mini.json", (Conversation("mini", TURNS, ((1, 1_700_000_000_000),), QUESTIONS),),
               ())  # fmt: skip


@pytest.fixture
def systems(embedder, tmp_path: Path):
    store = ChittaStore(tmp_path / "chitta", embedder.inner)
    vectors = dict(zip(LINES, embedder.inner.embed(LINES).vectors, strict=True))
    made = [ChittaSystem(store, "hybrid"), ChittaSystem(store, "hybrid", ["sem"]),
            Bm25System(), DenseSystem(embedder.inner, vectors),
            ChittaSystem(store, "hybrid", fusion="rsf")]  # fmt: skip
    for system in made:
        system.setup()
    yield made
    for system in made:
        system.close()


def test_every_system_finds_the_gold_turns(systems) -> None:
    runs, skipped = run(DATA, systems, k=3)
    assert skipped == 1  # the question without gold evidence
    assert set(runs) == {"chitta:hybrid", "chitta:hybrid-sem", "bm25", "dense",
                         "chitta:hybrid+rsf"}  # fmt: skip
    for name, result in runs.items():
        assert [r["ranked"][0] for r in result.rows] == ["D1:2", "D1:3"], name
        assert result.summary()["metrics"]["all"]["mrr"] == 1.0
        assert result.summary()["latency_ms"]["n"] == 2


def test_chitta_reports_the_refused_turn_and_ablation_changes_lanes(systems) -> None:
    run(DATA, systems, k=3)
    hybrid, no_sem = systems[0], systems[1]
    assert any("Bye" not in note and "9 characters" in note for note in hybrid.run_notes())
    chitta = hybrid.store.open()
    full = chitta.recall("Rex tennis", realm="locomo-mini", limit=3)
    ablated = chitta.recall("Rex tennis", realm="locomo-mini", limit=3, ablate=no_sem.ablate)
    rest = ("ctx", "common", "code", "when", "dated")
    assert full.lanes_run == ("sem", "kw", "tag", *rest)
    assert ablated.lanes_run == ("kw", "tag", *rest)


def test_bm25_tokens_drop_stop_words() -> None:
    assert tokens("What does Rex like chasing?") == ["rex", "like", "chasing"]


def test_the_ablation_table_shows_each_lanes_delta(systems) -> None:
    from chitta.bench.report import markdown, results_record

    runs, skipped = run(DATA, systems, k=3)
    record = results_record(DATA, runs, skipped=skipped, settings={}, environment={}, notes=[])
    table = markdown(record, "chitta bench locomo")
    assert "| chitta:hybrid without sem |" in table
    assert "Ablation: recall@10 change" in table
    assert "without" not in markdown({**record, "systems": {"bm25": record["systems"]["bm25"]}},
                                     "x")  # fmt: skip


def test_the_ablation_matrix_runs_each_lane_off_in_turn(tmp_path: Path) -> None:
    from rich.console import Console

    from chitta.cli.bench import _build_systems
    from chitta.recall.config import preset

    made, _ = _build_systems(["chitta"], ["hybrid"], ["tag"], DATA, tmp_path, Console(),
                             matrix=True)  # fmt: skip
    others = [lane for lane in preset("hybrid").lane_weights if lane != "tag"]
    others += ["scoring", "inhibition", "updates"]
    assert [s.name for s in made] == ["chitta:hybrid-tag"] + [
        f"chitta:hybrid-tag-{lane}" for lane in others
    ]
    for system in made:
        system.close()


def test_an_ablation_is_compared_with_the_run_it_extends() -> None:
    from chitta.bench.report import ablation_lines

    def figures(value: float) -> dict:
        return {"metrics": {"all": {"recall@10": value}}}

    systems = {
        "chitta:hybrid": figures(0.7),
        "chitta:hybrid-tag": figures(0.69),
        "chitta:hybrid-tag-sem": figures(0.5),
        "chitta:keyword-x-y": figures(0.1),
    }
    rows = [line for line in ablation_lines(systems) if line.startswith("| chitta")]
    assert rows[0].startswith("| chitta:hybrid without tag |") and "-0.010" in rows[0]
    assert rows[1].startswith("| chitta:hybrid-tag without sem |") and "-0.190" in rows[1]
    assert len(rows) == 2  # nothing to compare chitta:keyword-x-y with


class _Clockwatcher:
    """A system that answers nothing and notes the "now" each question was asked at."""

    name = "clockwatcher"

    def __init__(self) -> None:
        self.asked_at: list[int | None] = []

    def setup(self) -> None: ...

    def load(self, realm: str, conversation: Conversation) -> None: ...

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        self.asked_at.append(now_ms)
        return []

    def close(self) -> None: ...


LME_QUESTIONS = (
    Question("lme", 0, "What does Rex like chasing?", 1, ("D1:2",), "single-session-user",
             1_700_100_000_000),
    Question("lme", 1, "When is the quarterly report due?", 5, ("D1:3",), "knowledge-update",
             1_700_200_000_000),
)  # fmt: skip
LME = Dataset("lme.json", (Conversation("lme", TURNS, ((1, 1_700_000_000_000),), LME_QUESTIONS),),
              (), LONGMEMEVAL)  # fmt: skip


def test_each_question_is_asked_at_its_own_now() -> None:
    watcher = _Clockwatcher()
    run(LME, [watcher], k=3)
    assert watcher.asked_at == [1_700_100_000_000, 1_700_200_000_000]
    run(DATA, [watcher], k=3)  # LoCoMo's questions have no date: the real clock
    assert watcher.asked_at[2:] == [None, None]


def test_a_longmemeval_report_uses_its_types_and_tables_ndcg_and_mrr_per_type() -> None:
    from chitta.bench.report import markdown, results_record

    runs, skipped = run(LME, [_setup(Bm25System())], k=3)
    record = results_record(LME, runs, skipped=skipped, settings={}, environment={}, notes=[])
    assert record["data"]["categories"]["names"]["5"] == "knowledge-update"
    assert set(record["systems"]["bm25"]["metrics"]) == {"1", "5", "all"}  # no "1-4"
    table = markdown(record, "chitta bench locomo --data lme.json")
    assert table.startswith("### LongMemEval run")
    assert "| system | single-session-user (1) | single-session-assistant (2) |" in table
    assert "temporal-reasoning (6) | all | p50 ms" in table and "1-4" not in table
    assert "nDCG@10 per category:" in table and "MRR per category:" in table
    plain = run(DATA, [_setup(Bm25System())], k=3)[0]
    locomo = markdown(results_record(DATA, plain, skipped=1, settings={}, environment={},
                                     notes=[]), "x")  # fmt: skip
    assert "| system | multi-hop (1) | temporal (2) | open-domain (3) | single-hop (4) | " \
           "adversarial (5) | 1-4 | all | p50 ms | p95 ms |" in locomo  # fmt: skip
    assert "nDCG@10 per category" not in locomo


def _setup(system):
    system.setup()
    return system


def test_a_user_assistant_chat_keeps_its_roles_and_named_speakers_none(embedder, tmp_path) -> None:
    chat = tuple(
        Turn(f"D1:{i + 1}", 1, speaker, text, None, 1_700_000_000_000)
        for i, (speaker, text) in enumerate([
            ("user", "I adopted a grey cat called Miso last spring."),
            ("assistant", "Congratulations on adopting Miso! Cats love a routine."),
        ])
    )  # fmt: skip
    store = ChittaStore(tmp_path / "chitta", embedder.inner)
    store.load("chat", Conversation("chat", chat, ((1, 1_700_000_000_000),), ()))
    store.load("mini", DATA.conversations[0])
    roles = {store.turn_of[m.id] + "@" + m.realm: m.source.role
             for m in store.open().store.iter_memories()}  # fmt: skip
    store.close()
    assert roles["D1:1@chat"] == "user" and roles["D1:2@chat"] == "assistant"
    assert roles["D1:1@mini"] is None  # "Ann" is a person, not a role


def test_a_store_an_earlier_run_left_is_refused_not_loaded_twice(embedder, tmp_path) -> None:
    first = ChittaStore(tmp_path / "chitta", embedder.inner)
    first.load("mini", DATA.conversations[0])
    first.close()
    again = ChittaStore(tmp_path / "chitta", embedder.inner)
    with pytest.raises(BadArgument, match="already holds 'mini' from an earlier run"):
        again.load("mini", DATA.conversations[0])
    again.load("other", DATA.conversations[0])  # another realm of the same store loads
    counts = again.open().store.counts()["per_realm"]
    again.close()
    assert counts == {"mini": 4, "other": 4}  # "Bye!" is too short to store

"""The session log: what a session was shown and asked lately, bounded."""

from chitta.recall import session as session_module
from chitta.recall.session import SessionLog


def test_view_lists_shown_then_stored_newest_first_and_recent_topics() -> None:
    log = SessionLog()
    log.note("s1", ["a", "b"], ("norway", "trip"))
    log.note("s1", ["c"], ("bergen",))
    view = log.view("s1", stored=["z", "a"])
    assert view.primed == ("c", "b", "a", "z")
    assert view.topics == ("bergen", "norway", "trip")
    assert log.view("other").primed == () and log.view("other").topics == ()


def test_only_the_best_few_hits_count_as_shown_and_old_queries_age_out() -> None:
    log = SessionLog()
    log.note("s", [str(i) for i in range(20)], ())
    assert len(log.view("s").primed) == session_module.SHOWN_PER_RECALL
    for i in range(session_module.MAX_QUERIES + 2):
        log.note("s", [], (f"topic{i}",))
    assert "topic0" not in log.view("s").topics
    assert len(log.view("s").topics) == session_module.MAX_QUERIES


def test_the_least_recently_active_session_is_forgotten_first() -> None:
    log = SessionLog(max_sessions=2)
    for name in ("a", "b", "a", "c"):
        log.note(name, [name], ())
    assert log.view("a").primed == ("a",)
    assert log.view("b").primed == ()


def test_a_long_query_keeps_its_first_words_only() -> None:
    log = SessionLog()
    words = tuple(f"word{i:05d}" for i in range(10_000))  # a 90 KB query's terms
    log.note("s", [], words)
    topics = log.view("s").topics
    assert topics == words[: len(topics)]
    assert sum(map(len, topics)) <= session_module.MAX_TOPIC_CHARS < sum(map(len, words))

"""The admission gate's rules (seed 000), one by one, and the reply-level gateway."""

import pytest

from chitta.recall.confidence.gate import (
    GateSettings,
    GateView,
    Turn,
    admit,
    bm25_ceiling,
    distinctive_tokens,
    gate_reply,
    is_terse_negation,
    normalised_bm25,
    read_turn,
    relaxed,
)

ON = GateSettings()
TURN = Turn(("kafka", "retention"), False)
ONE = Turn(("kafka",), False)


def _admit(lane, shared=(), band="UNKNOWN", turn=TURN, settings=ON, **kw):
    return admit(lane, shared, band=band, turn=turn, settings=settings, **kw)


@pytest.mark.parametrize(
    "text", ["no", "Nope.", "no thanks", "No, stop!", "don't", "nah, not that", "wrong"]
)
def test_terse_negations(text: str) -> None:
    assert is_terse_negation(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "thanks",
        "no, use the kafka retention from staging instead",
        "why not kafka?",
        "stop the deploy",
    ],
)
def test_not_terse_negations(text: str) -> None:
    assert not is_terse_negation(text)


def test_distinctive_means_no_stop_word_and_rare_in_the_realm() -> None:
    df = {"caroline": 900, "paint": 12, "what": 2000}.get
    tokens = distinctive_tokens("What did Caroline paint?", lambda w: df(w, 0), 1000, 0.1)
    assert tokens == ("paint",)  # caroline is in 90% of the memories; what/did are stop words
    # A small realm: every word that is not a stop word is distinctive.
    assert distinctive_tokens("What did Caroline paint?", lambda w: 5, 10, 0.1) == (
        "caroline",
        "paint",
    )
    turn = read_turn("no thanks", lambda w: 0, 1000, 0.1)
    assert turn.terse_negation and turn.distinctive == ("thanks",)


def test_the_keyed_correction_lookup_is_never_silenced() -> None:
    for band in ("KNOWN", "UNKNOWN"):
        assert _admit("corr", band=band).reason == "keyed"
    assert _admit("corr", turn=Turn((), True)).admitted


def test_terse_negations_and_turns_without_distinctive_words_recall_nothing_by_topic() -> None:
    for lane in ("hyb", "sem", "kw", "ctx", "xr"):
        assert _admit(lane, ("x",), band="KNOWN", turn=Turn(("x",), True)).reason == (
            "terse-negation"
        )
        assert _admit(lane, band="KNOWN", turn=Turn((), False)).reason == "no-distinctive-token"


def test_under_known_every_row_is_admitted_with_its_lane() -> None:
    for lane in ("hyb", "sem", "kw", "ctx", "xr"):
        assert _admit(lane, (), band="KNOWN") == _admit(lane, (), band="KNOWN")
        assert _admit(lane, (), band="KNOWN").reason == lane
    assert _admit("sem", band=None).admitted  # no band known: nothing is silenced


def test_under_unknown_sem_and_ctx_are_dropped_and_others_need_a_shared_token() -> None:
    assert _admit("sem", ("kafka",)).reason == "unknown-silenced"
    assert _admit("ctx", ("kafka",)).reason == "unknown-silenced"
    assert _admit("fuzzy-corr", ("kafka",)).reason == "unknown-silenced"  # unnamed lanes too
    for lane in ("hyb", "kw", "xr"):
        assert _admit(lane, ()).reason == "no-shared-token"
        assert _admit(lane, ("kafka",)).reason == "shares-token"


def test_a_single_token_turn_needs_a_strong_keyword_match() -> None:
    assert _admit("kw", ("kafka",), turn=ONE, kw_norm=59.9).reason == "weak-single-token"
    assert _admit("kw", ("kafka",), turn=ONE, kw_norm=None).reason == "weak-single-token"
    assert _admit("kw", ("kafka",), turn=ONE, kw_norm=60).admitted
    assert _admit("kw", ("kafka",), turn=TURN, kw_norm=10).admitted  # two tokens: no floor
    assert _admit("hyb", ("kafka",), turn=ONE, kw_norm=10).admitted  # kw rows only
    lenient = GateSettings(kw_single_token_min=0)
    assert _admit("kw", ("kafka",), turn=ONE, kw_norm=0.0, settings=lenient).admitted


def test_silence_off_admits_everything_the_topic_rules_allow() -> None:
    off = GateSettings(silence=False)
    assert _admit("sem", (), settings=off).admitted
    assert _admit("kw", (), turn=ONE, settings=off).admitted
    assert _admit("hyb", (), settings=off, turn=Turn((), False)).reason == "no-distinctive-token"


def test_small_realm_relaxation_extends_the_token_rule_to_sem_and_ctx() -> None:
    assert _admit("sem", ("kafka",), relax=True).reason == "small-realm"
    assert _admit("ctx", (), relax=True).reason == "no-shared-token"
    assert relaxed("infra", "default", page=2, limit=5, raw=0.5, settings=ON)
    assert not relaxed("default", "default", page=2, limit=5, raw=0.5, settings=ON)
    assert not relaxed("infra", "default", page=5, limit=5, raw=0.5, settings=ON)
    assert not relaxed("infra", "default", page=2, limit=5, raw=0.3, settings=ON)


def test_normalised_bm25_is_a_share_of_the_terms_ceiling() -> None:
    df = {"kafka": 10, "retention": 100}.get
    ceiling = bm25_ceiling(["kafka", "retention"], lambda t: df(t, 0), 10_000)
    assert ceiling > bm25_ceiling(["kafka"], lambda t: df(t, 0), 10_000) > 0
    assert normalised_bm25(ceiling / 2, ceiling) == pytest.approx(50)
    assert normalised_bm25(ceiling * 3, ceiling) == 100 and normalised_bm25(-1, ceiling) == 0
    assert normalised_bm25(5.0, 0.0) == 0.0


def test_gate_reply_keeps_admitted_rows_and_counts_the_rest() -> None:
    reply = {
        "ok": True,
        "confidence": {"band": "UNKNOWN", "calibrated": 0.05, "raw": 0.2},
        "turn": {"distinctive": ["kafka", "retention"], "terse_negation": False},
        "hits": [
            {"id": "a", "realm": "infra", "shared": ["kafka"]},
            {"id": "b", "realm": "infra", "shared": []},
            {"id": "c", "realm": "other", "shared": ["retention"]},
        ],
    }
    out = gate_reply(
        reply, realm="infra", default_realm="default", limit=10, strategy="hybrid", settings=ON
    )
    assert [(h["id"], h["admitted"]) for h in out["hits"]] == [
        ("a", "shares-token"),
        ("c", "shares-token"),
    ]
    assert out["gate"] == {
        "band": "UNKNOWN",
        "relaxed": False,
        "silence": True,
        "dropped": {"no-shared-token": 1},
    }
    semantic = gate_reply(
        reply, realm="infra", default_realm="default", limit=10, strategy="semantic", settings=ON
    )
    assert [h["id"] for h in semantic["hits"]] == ["c"]  # c is cross-realm: judged as xr
    assert gate_reply(
        {"ok": False, "message": "x"},
        realm="r",
        default_realm="default",
        limit=1,
        strategy="hybrid",
        settings=ON,
    ) == {"ok": False, "message": "x"}


def test_the_debug_line_holds_no_memory_text() -> None:
    view = GateView(ON, TURN, "UNKNOWN", 0.0412, relax=True)
    row = {"id": "01ABC", "content": "secret kafka password hunter2", "shared": ["kafka"]}
    line = view.debug_line("hyb", row, view.verdict("hyb", row))
    assert line == (
        "chitta admit: lane=hyb id=01ABC confidence=0.041 band=UNKNOWN "
        "relaxed=yes admitted shares-token"
    )


def test_a_reply_without_a_turn_or_band_is_judged_without_them() -> None:
    # An older daemon's reply: no turn, no confidence. Nothing is silenced, nothing crashes.
    reply = {"ok": True, "hits": [{"id": "a", "realm": "infra"}]}
    out = gate_reply(reply, realm="infra", default_realm="default", limit=10, strategy="hybrid",
                     settings=ON)  # fmt: skip
    assert [h["admitted"] for h in out["hits"]] == ["hyb"] and out["gate"]["band"] is None
    partial = {**reply, "confidence": {"band": "UNKNOWN"}}  # no calibrated, no raw
    out = gate_reply(partial, realm="infra", default_realm="default", limit=10,
                     strategy="hybrid", settings=ON)  # fmt: skip
    assert out["gate"]["dropped"] == {"no-shared-token": 1} and not out["gate"]["relaxed"]
    assert _admit("kw", ("kafka",), turn=None, kw_norm=70).admitted
    assert _admit("kw", ("kafka",), turn=None, kw_norm=10).reason == "weak-single-token"

"""An agent session's turn is distilled as it is stored (api.py, distill/turns.py): each
fragment a memory of its own kind, verbatim, tagged operational and linked to its turn;
nothing repeated, nothing secret, nothing when switched off."""

from __future__ import annotations

from dataclasses import replace

from chitta.api import Chitta
from chitta.config import Settings
from chitta.distill.turns import TAG, VIA
from chitta.ops import OPERATIONS
from chitta.store.kinds import Kind
from chitta.store.records import Source

USER = Source(session="s1", role="user")
TURN = ("No, use pnpm, not npm for this repository. I prefer tabs over spaces in every "
        "Python file. Can you fix the CI job next?")  # fmt: skip


def test_a_turn_gives_its_fragments_as_memories_of_their_own(chitta: Chitta) -> None:
    turn = chitta.remember(TURN, kind="episode", source=USER, realm="w")
    assert len(turn.distilled) == 2
    first, second = (chitta.get(i) for i in turn.distilled)
    assert (first.kind, first.content) == (Kind.CORRECTION, "No, use pnpm, not npm for this "
                                                            "repository.")  # fmt: skip
    assert (second.kind, second.content) == (
        Kind.PREFERENCE,
        "I prefer tabs over spaces in every Python file.",
    )
    for m in (first, second):
        assert m.tags == (TAG,)
        assert m.source == Source(session="s1", role="user", via=VIA, turns=(turn.id,))
        assert m.realm == "w"
    assert chitta.get(turn.id).kind is Kind.EPISODE  # the turn itself is kept as it was


def test_a_fragment_already_stored_is_reinforced_not_stored_again(chitta: Chitta) -> None:
    first = chitta.remember(TURN, kind="episode", source=USER, realm="w")
    later = chitta.remember(TURN + " Thanks!", kind="episode", source=Source("s2", role="user"),
                            realm="w")  # fmt: skip
    assert later.id != first.id  # a turn of its own
    assert later.distilled == first.distilled  # the same two memories, reinforced
    assert chitta.get(first.distilled[0]).strength > 0.7


def test_the_assistants_side_gives_decisions_and_fixes_only(chitta: Chitta) -> None:
    said = ("Always warm up before your runs. The build failed with ModuleNotFoundError; I "
            "fixed it by pinning numpy to 1.26.")  # fmt: skip
    turn = chitta.remember(said, kind="episode", source=Source("s1", role="assistant"),
                           realm="w")  # fmt: skip
    assert [chitta.get(i).kind for i in turn.distilled] == [Kind.FAILURE]


def test_only_a_sessions_turn_is_distilled(chitta: Chitta) -> None:
    assert chitta.remember(TURN, realm="w").distilled == ()  # not an episode
    assert chitta.remember(TURN + " x", kind="episode", realm="w").distilled == ()  # no session


def test_a_credential_is_never_a_fragment(chitta: Chitta) -> None:
    said = "I prefer the staging token ghp_1234567890abcdefghijABCDEFGHIJ for the bot."
    turn = chitta.remember(said, kind="episode", source=USER, realm="w")
    assert turn.distilled == ()


def test_switched_off(settings: Settings, embedder) -> None:
    with Chitta.open(replace(settings, distill=False), embedder=embedder) as chitta:
        assert chitta.remember(TURN, kind="episode", source=USER, realm="w").distilled == ()
        assert len(list(chitta.store.iter_memories(realm="w"))) == 1


def test_the_remember_reply_names_the_distilled_memories(chitta: Chitta) -> None:
    reply = OPERATIONS["remember"].call(
        chitta, {"content": TURN, "kind": "episode", "session": "s1", "role": "user", "realm": "w"}
    )
    assert len(reply["distilled"]) == 2

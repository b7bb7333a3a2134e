"""The links and the symbol history behind Store.code() (store/code_links.py), on both
backends: a link keeps the body it was made against; the history records appearances,
body changes and removals in write order; an index run reads the table as it was."""

from __future__ import annotations

from chitta.code.model import FileExtract, Symbol
from chitta.store.code_links import SymbolLink


def sym(name: str, body: str, line: int = 1) -> Symbol:
    return Symbol(name, f"m.{name}", "function", f"def {name}()", "m.py", line, line + 1, "m",
                  "python", body_hash=body)  # fmt: skip


def extract(*symbols: Symbol) -> FileExtract:
    return FileExtract("m.py", "python", "h" + "".join(s.body_hash for s in symbols), 9, symbols)


def test_history_runs_and_links_follow_the_bodies(store) -> None:
    code = store.code()
    assert not code.has_symbols("work")
    (f1, g1) = code.replace_file("work", "/r", extract(sym("f", "a"), sym("g", "b", 4)), "c1", 1)
    assert code.has_symbols("work") and not code.has_symbols("other")
    run1 = code.record_index("work", "/r", "c1", 2)
    link = SymbolLink("work", "M1", f1, "/r", "m.f", "a", "c1", 3)
    assert code.add_links([link, link]) == 1
    assert code.add_links([SymbolLink("work", "M1", f1, "/r", "m.f", "zz", "c9", 4)]) == 0
    assert code.linked_memories("work", [f1, g1]) == {f1: ["M1"]}
    (now,) = code.links_of("work", ["M1"])
    assert now.link == link and not now.changed and now.commit == "c1"

    # g's body changes, f's does not: only g gets a history row.
    code.replace_file("work", "/r", extract(sym("f", "a"), sym("g", "B", 4)), "c2", 5)
    run2 = code.record_index("work", "/r", "c2", 6)
    assert run2.upto == run1.upto + 1
    assert not code.links_of("work", ["M1"])[0].changed
    # f's body changes, then f goes.
    code.replace_file("work", "/r", extract(sym("f", "A"), sym("g", "B", 4)), "c3", 7)
    run3 = code.record_index("work", "/r", "c3", 8)
    assert code.links_of("work", ["M1"])[0].changed
    assert code.remove_file("work", "/r", "m.py")
    run4 = code.record_index("work", "/r", "c4", 9)
    gone = code.links_of("work", ["M1"])[0]
    assert gone.body_hash is None and gone.changed

    assert [r.commit for r in code.index_runs("work")] == ["c1", "c2", "c3", "c4"]
    assert code.index_runs("work", "/elsewhere") == []
    assert code.history_as_of("work", run1) == {f1: ("m.py", "m.f", "a"), g1: ("m.py", "m.g", "b")}
    assert code.history_as_of("work", run2)[g1][2] == "B"
    assert code.history_as_of("work", run3)[f1][2] == "A"
    assert code.history_as_of("work", run4) == {}
    for run, changed in ((run1, False), (run2, False), (run3, True), (run4, True)):
        (then,) = code.links_as_of("work", ["M1"], {"/r": run})
        assert then.changed is changed and then.commit == run.commit
    assert code.links_as_of("work", ["M1"], {}) == []
    # Another realm sees none of it.
    assert code.links_of("other", ["M1"]) == [] and code.index_runs("other") == []

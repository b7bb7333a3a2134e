"""The one exception hierarchy: every cause has its own stable code, and a code finds its class."""

from __future__ import annotations

import importlib

import pytest

from chitta import errors
from chitta.errors import ChittaError, MemoryNotFound, StoreLocked, error_class, error_classes

# Modules that define ChittaError subclasses outside errors.py (grep "(ChittaError)" in src/).
ELSEWHERE = ("chitta.cited.base", "chitta.cited.synth", "chitta.bench.systems.cpersona",
             "chitta.bench.scale.settings", "chitta.daemon.client")  # fmt: skip


def every_subclass() -> list[type[ChittaError]]:
    for name in ELSEWHERE:
        importlib.import_module(name)
    found, pending = [], [ChittaError]
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.append(cls)
            pending.extend(cls.__subclasses__())
    return found


def test_every_cause_sets_a_code_no_other_one_has() -> None:
    classes = [c for c in every_subclass() if c.__dict__.get("_by_code", True)]
    unnamed = [c.__name__ for c in classes if "code" not in c.__dict__]
    assert unnamed == []
    codes = [c.code for c in classes]
    assert sorted(codes) == sorted(set(codes)), "two causes share a code"


def test_a_code_finds_its_class() -> None:
    every_subclass()
    assert error_class("memory_not_found") is MemoryNotFound
    assert error_class("store_locked") is StoreLocked
    assert error_class("error") is ChittaError
    assert error_class("no_such_code") is None
    for code, cls in error_classes().items():
        assert cls.code == code
    # The daemon client's stand-ins never stand for a code.
    assert "daemon_error" not in error_classes()


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [
        ("daemon_timeout", 4),
        ("daemon_unavailable", 4),
        ("daemon_busy", 4),
        ("request_too_large", 2),
    ],
)
def test_the_daemon_causes_have_stable_codes(code: str, exit_code: int) -> None:
    cls = error_class(code)
    assert cls is not None and cls.__module__ == errors.__name__
    assert cls.exit_code == exit_code

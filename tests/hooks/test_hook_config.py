"""The hooks' settings, and the realm of a hook run (the realm rule, tests/test_scope.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chitta.errors import BadArgument
from chitta.hooks.config import DEFAULT_BUDGET_MS, load_hook_settings, realm_for


def test_the_realm_is_the_git_root_name(tmp_path: Path) -> None:
    root = tmp_path / "my project"
    (root / ".git").mkdir(parents=True)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    assert realm_for(deep, {}) == "my-project"  # a space is not allowed in a realm


def test_without_git_the_variable_or_default(tmp_path: Path) -> None:
    assert realm_for(tmp_path / "plain", {}) == "default"
    assert realm_for(tmp_path / "plain", {"CHITTA_REALM": "ops"}) == "ops"
    assert realm_for(tmp_path / "plain", {"CHITTA_HOOK_REALM": "old"}) == "old"


def test_budget_setting() -> None:
    assert load_hook_settings({}).budget_ms == DEFAULT_BUDGET_MS
    assert load_hook_settings({"CC_SOUL_HOOK_BUDGET_MS": "250"}).budget_ms == 250
    for bad in ("soon", "0", "-5"):
        with pytest.raises(BadArgument, match="CHITTA_HOOK_BUDGET_MS"):
            load_hook_settings({"CHITTA_HOOK_BUDGET_MS": bad})

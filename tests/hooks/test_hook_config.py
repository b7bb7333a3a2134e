"""The hooks' settings and the realm rule."""

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
    assert realm_for(deep) == "my-project"  # a space is not allowed in a realm


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    root = tmp_path / "wt-hooks"
    root.mkdir()
    (root / ".git").write_text("gitdir: /elsewhere\n")
    assert realm_for(root / "missing" / "dir") == "wt-hooks"


def test_without_git_the_folder_name_and_the_override_win(tmp_path: Path) -> None:
    assert realm_for(tmp_path / "plain") == "plain"
    assert realm_for(tmp_path / "plain", "ops") == "ops"
    assert realm_for(Path("/")) == "default"


def test_budget_setting() -> None:
    assert load_hook_settings({}).budget_ms == DEFAULT_BUDGET_MS
    assert load_hook_settings({"CC_SOUL_HOOK_BUDGET_MS": "250"}).budget_ms == 250
    assert load_hook_settings({"CHITTA_HOOK_REALM": "x"}).realm == "x"
    for bad in ("soon", "0", "-5"):
        with pytest.raises(BadArgument, match="CHITTA_HOOK_BUDGET_MS"):
            load_hook_settings({"CHITTA_HOOK_BUDGET_MS": bad})

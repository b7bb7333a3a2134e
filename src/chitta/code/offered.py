"""Whether a store has code indexed: the MCP server offers its ``code`` tool only then.

Every tool definition goes with every request a client makes (docs/mcp.md), so a tool that
cannot answer must not cost a session without indexed code anything. The daemon notes a
whole ``code_index`` with an empty, owner-only file beside the store's spool
(``<spool>.code``); the MCP server, which holds no store, reads whether it exists when it
lists its tools. The note is never taken back: a store that had code indexed keeps the tool
(an empty realm's answer says how to index one).
"""

from __future__ import annotations

import os
from pathlib import Path

from chitta import files


def marker(spool_file: Path) -> Path:
    """The note of store ``spool_file``'s (its spool's path, config.Settings.spool_path)."""
    return spool_file.with_suffix(".code")


def mark(spool_file: Path) -> None:
    """Note that the store has code indexed (idempotent; owner-only, folder too)."""
    path = marker(spool_file)
    if path.exists():
        return
    files.private_dir(path.parent)
    os.close(files.open_private(path, os.O_WRONLY))


def has_code(spool_file: Path) -> bool:
    """Whether the store has had code indexed."""
    return marker(spool_file).exists()

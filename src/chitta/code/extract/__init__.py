"""Extraction (issue 20, part 1): one source file's bytes in, its symbols, callsites, imports
and bases out (chitta.code.model records). Pure: no I/O, and bad source never raises.

Needs the ``code`` extra (tree-sitter and the grammar wheels); without it ``extract`` raises
chitta.errors.MissingExtra naming ``pip install 'chitta[code]'``.
"""

from __future__ import annotations

from chitta.code.extract.core import content_hash
from chitta.code.extract.detect import language_for
from chitta.code.extract.files import extract

__all__ = ["content_hash", "extract", "language_for"]

"""Which language a file is written in: by its extension, a shebang, and for ``.h`` its text."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_BY_SUFFIX = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".java": "java",
    ".rb": "ruby",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
}
_BY_NAME = {"Rakefile": "ruby", "Gemfile": "ruby"}
#: Interpreters a shebang may name, by the language they run.
_SHEBANG = re.compile(rb"^#![^\n]*?\b(python[0-9.]*|node|ruby)\b")
_SHEBANG_LANGUAGE = {b"node": "javascript", b"ruby": "ruby"}
#: What only C++ writes in a header: a header with none of these is read as C.
_CPP_HEADER = re.compile(
    rb"^\s*(namespace\s+\w+|template\s*<|class\s+\w+[^;]*\{|using\s+namespace\b"
    rb"|(public|private|protected)\s*:)|\bstd::",
    re.MULTILINE,
)


def language_for(path: str, head: bytes | None = None) -> str | None:
    """The language of the file at ``path`` (a model.LANGUAGES name), or None.

    ``head``, the file's first bytes where the caller has them, decides an extensionless
    script by its shebang and a ``.h`` header between C and C++ (C++ when it declares a
    namespace, a template, a class with a body, an access label or uses ``std::``).
    """
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    language = _BY_SUFFIX.get(suffix) or _BY_NAME.get(name)
    if language == "c" and suffix == ".h" and head and _CPP_HEADER.search(head):
        return "cpp"
    if language is None and not suffix and head:
        match = _SHEBANG.match(head)
        if match:
            return _SHEBANG_LANGUAGE.get(match.group(1), "python")
    return language

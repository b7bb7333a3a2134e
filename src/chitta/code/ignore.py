"""A small reader of ``.gitignore`` files, for folders that are not a git work tree (in one,
the indexer asks git itself: ``git ls-files -co --exclude-standard``).

It follows the pattern rules of gitignore(5) that matter for skipping files: blank lines
and ``#`` comments, ``!`` negation (the last matching pattern wins), a trailing ``/``
matching folders only, a ``/`` at the start or in the middle anchoring the pattern to its
file's folder, ``*`` and ``?`` within one path part, ``**`` across parts, ``[...]``
classes. A folder that is ignored is not entered, so nothing under it can be taken back by
a later ``!``, as in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of a ``.gitignore``, relative to the folder ``base`` ("" for the root)."""

    base: str
    regex: re.Pattern[str]
    negate: bool
    folders_only: bool


def _translate(glob: str) -> str:
    """The regex of a gitignore glob (no ``/`` at either end)."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := glob.find("]", i + 1)) > i:
            body = glob[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse(text: str, base: str = "") -> list[Rule]:
    """The rules of one ``.gitignore`` in the folder ``base`` (relative to the root)."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        folders_only = line.endswith("/")
        line = line.strip("/") if folders_only else line
        anchored = line.startswith("/") or "/" in line
        line = line.lstrip("/")
        if not line:
            continue
        body = _translate(line)
        regex = re.compile(body if anchored else f"(?:.*/)?{body}")
        rules.append(Rule(base, regex, negate, folders_only))
    return rules


class Ignore:
    """The ``.gitignore`` rules met so far on a walk down from the root."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []

    def read(self, folder: Path, rel: str) -> None:
        """Add the rules of ``folder``'s ``.gitignore`` (``rel``: its path from the root)."""
        try:
            text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        self.rules.extend(parse(text, rel))

    def ignored(self, rel: str, *, folder: bool) -> bool:
        """Whether the path ``rel`` (from the root, with ``/``) is ignored."""
        verdict = False
        for rule in self.rules:
            if rule.folders_only and not folder:
                continue
            if rule.base:
                if not rel.startswith(rule.base + "/"):
                    continue
                inner = rel[len(rule.base) + 1 :]
            else:
                inner = rel
            if rule.regex.fullmatch(inner):
                verdict = not rule.negate
        return verdict

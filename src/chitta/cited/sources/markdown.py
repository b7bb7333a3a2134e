"""Markdown memory files as a cited recall source (kind ``markdown``): seed 003's tier 0, the
context file (a MEMORY.md).

Each file is split into sections at its headings (ATX ``#`` and setext underlines, not
inside fenced code; YAML front matter skipped): a section is its heading path and the text
under it, and a long one is cut at paragraphs into parts of at most ~1,500 characters. The
sections of every configured file are scored against the query with Okapi BM25 (Robertson &
Zaragoza 2009; k1 = 1.2, b = 0.75, Lucene's non-negative idf), words tokenised as chitta's
keyword search does (``\\w+``, lower case, chitta's stop words dropped). No model. Sections
that share no word with the query score zero and are not returned. Files are parsed again
only when their size or modification time changes.
"""

from __future__ import annotations

import glob
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chitta.cited.base import Chunk, SourceError
from chitta.cited.settings import DEFAULT_PRIORITY
from chitta.store.terms import STOP_WORDS, tokens

#: A section longer than this is cut at paragraphs (a paragraph longer still, at lines).
MAX_SECTION_CHARS = 1500
BM25_K1 = 1.2
BM25_B = 0.75

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True, slots=True)
class Section:
    """One searchable piece of a file: its heading path, its text, where it starts."""

    file: Path
    headings: tuple[str, ...]
    body: str
    line: int  # 1-based line of its heading (or of its first line, before any heading)
    part: int = 1
    parts: int = 1

    @property
    def text(self) -> str:
        """What a citation shows: the heading path, then the text."""
        title = " > ".join(self.headings)
        return f"{title}\n{self.body}" if title and self.body else title or self.body

    @property
    def ref(self) -> str:
        return f"{self.file.name}#{self.headings[-1]}" if self.headings else self.file.name


def terms(text: str) -> list[str]:
    """The words of ``text`` as BM25 counts them: lower case, stop words dropped."""
    return [w for w in tokens(text) if w not in STOP_WORDS]


def split_sections(text: str, file: Path) -> list[Section]:
    """The sections of one Markdown text, in file order, long ones cut into parts."""
    lines = text.splitlines()
    start = _front_matter_end(lines)
    out: list[Section] = []
    path: list[tuple[int, str]] = []  # (level, title) of the open headings
    body: list[str] = []
    line_no, fence = start + 1, None

    def close() -> None:
        content = "\n".join(body).strip()
        titles = tuple(title for _, title in path)
        if content:
            out.extend(_parts(Section(file, titles, content, line_no)))
        body.clear()

    for i in range(start, len(lines)):
        line = lines[i]
        if fence is None and (opened := _FENCE.match(line)):
            fence = opened.group(1)[0] * 3
        elif fence is not None and line.lstrip().startswith(fence):
            fence = None
        elif fence is None and (heading := _heading(lines, i, body)):
            level, title, used = heading
            if used == 2:  # setext: the title line was read as body text
                body.pop()
            close()
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
            line_no = i + 1 if used == 1 else i
            continue
        body.append(line)
    close()
    return out


def _heading(lines: list[str], i: int, body: list[str]) -> tuple[int, str, int] | None:
    """(level, title, 1 for ATX or 2 for setext) when line ``i`` makes a heading."""
    if atx := _ATX.match(lines[i]):
        title = (atx.group(2) or "").strip()
        return (len(atx.group(1)), title, 1) if title else None
    setext = _SETEXT.match(lines[i])
    # A setext underline needs a paragraph line right above it (not a blank, not a list);
    # ``body`` ends with the line above, as a heading empties it.
    if setext and body and body[-1].strip():
        above = body[-1].strip()
        if not above.startswith(("-", "*", "+", ">", "|", "`", "~")):
            return (1 if setext.group(1)[0] == "=" else 2), above, 2
    return None


def _front_matter_end(lines: list[str]) -> int:
    """The index of the first line after a leading ``---`` … ``---`` block (0 if none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for j in range(1, len(lines)):
        if lines[j].strip() in ("---", "..."):
            return j + 1
    return 0


def _parts(section: Section) -> list[Section]:
    """``section`` as one or more parts of at most MAX_SECTION_CHARS, cut at paragraphs."""
    if len(section.body) <= MAX_SECTION_CHARS:
        return [section]
    pieces: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", section.body):
        pieces.extend(_cut(paragraph.strip(), MAX_SECTION_CHARS))
    chunks: list[str] = []
    for piece in filter(None, pieces):
        if chunks and len(chunks[-1]) + 2 + len(piece) <= MAX_SECTION_CHARS:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return [
        Section(section.file, section.headings, body, section.line, n, len(chunks))
        for n, body in enumerate(chunks, start=1)
    ]


def _cut(text: str, limit: int) -> list[str]:
    """A paragraph longer than ``limit`` cut at line ends, then at spaces, then anywhere."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    rest = text
    while len(rest) > limit:
        at = max(rest.rfind("\n", 0, limit), rest.rfind(" ", 0, limit))
        at = at if at > limit // 2 else limit
        out.append(rest[:at].strip())
        rest = rest[at:].strip()
    return [*out, rest] if rest else out


def bm25(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[float]:
    """Okapi BM25 of each of ``docs`` (their terms) for the ``query`` terms (each counted
    once). idf = ln(1 + (N - n + 0.5) / (n + 0.5)), never negative."""
    n_docs = len(docs)
    if not n_docs or not query:
        return [0.0] * n_docs
    avg = sum(len(d) for d in docs) / n_docs or 1.0
    counts = [Counter(d) for d in docs]
    wanted = list(dict.fromkeys(query))
    df = {t: sum(1 for c in counts if t in c) for t in wanted}
    idf = {t: math.log(1.0 + (n_docs - df[t] + 0.5) / (df[t] + 0.5)) for t in wanted}
    scores = []
    for doc, c in zip(docs, counts, strict=True):
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(doc) / avg)
        scores.append(sum(idf[t] * c[t] * (BM25_K1 + 1.0) / (c[t] + norm) for t in wanted if c[t]))
    return scores


class MarkdownSource:
    """Sections of the Markdown files ``paths`` (files or glob patterns), ranked by BM25."""

    kind = "markdown"

    def __init__(
        self,
        name: str,
        paths: Sequence[str | Path],
        *,
        priority: float = DEFAULT_PRIORITY["markdown"],
    ) -> None:
        self.name = name
        self.priority = priority
        self.paths = tuple(str(Path(p).expanduser()) for p in paths)
        self._cache: dict[Path, tuple[tuple[int, int], list[Section], list[list[str]]]] = {}
        self._lock = threading.Lock()

    def search(self, query: str, limit: int) -> list[Chunk]:
        wanted = terms(query)
        sections: list[Section] = []
        docs: list[list[str]] = []
        for file in self.files():
            found, tokens = self._read(file)
            sections.extend(found)
            docs.extend(tokens)
        scores = bm25(wanted, docs)
        ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: -scores[i])
        out = []
        for rank, i in enumerate(ranked[:limit], start=1):
            s = sections[i]
            meta = {"file": str(s.file), "heading": " > ".join(s.headings), "line": s.line}
            if s.parts > 1:
                meta.update(part=s.part, parts=s.parts)
            out.append(Chunk(source=self.name, text=s.text, rank=rank,
                             score=round(scores[i], 6), ref=s.ref, meta=meta))  # fmt: skip
        return out

    def files(self) -> list[Path]:
        """The configured files, globs expanded, each once; a file named outright must exist,
        and at least one file must be found."""
        out: dict[Path, None] = {}
        for pattern in self.paths:
            if glob.has_magic(pattern):
                out.update((Path(p), None) for p in sorted(glob.glob(pattern, recursive=True))
                           if Path(p).is_file())  # fmt: skip
            elif Path(pattern).is_file():
                out[Path(pattern)] = None
            else:
                raise SourceError(f"no Markdown file at {pattern}")
        if not out:
            raise SourceError(f"no Markdown file matches {', '.join(self.paths)}")
        return list(out)

    def _read(self, file: Path) -> tuple[list[Section], list[list[str]]]:
        """The file's sections and their terms, parsed again only when the file changed."""
        try:
            stat = file.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
            with self._lock:
                cached = self._cache.get(file)
            if cached is not None and cached[0] == stamp:
                return cached[1], cached[2]
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise SourceError(f"cannot read {file}: {exc.strerror or exc}") from exc
        sections = split_sections(text, file)
        tokens = [terms(s.text) for s in sections]
        with self._lock:
            self._cache[file] = (stamp, sections, tokens)
        return sections, tokens

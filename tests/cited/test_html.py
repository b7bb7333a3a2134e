"""The HTML report: its markup (escaping, citation links, no external asset), then the page in a
real headless browser (Debian's chromium): the DOM it builds, its console, a screenshot."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chitta.cited.base import Chunk, Citation, CitedAnswer, SourceStats
from chitta.cited.html import CSP, linkify, render_html

CHROMIUM = Path("/usr/bin/chromium")

# --- fixtures: realistic answers --------------------------------------------------------------


def _cite(n: int, source: str, kind: str, content: str, score: float, **kw: object) -> Citation:
    return Citation(
        citation_id=n,
        source=source,
        source_kind=kind,
        content=content,
        rrf_score=score,
        raw_rrf=score / 61,
        source_score=kw.get("source_score", 0.8),  # type: ignore[arg-type]
        rank=kw.get("rank", n),  # type: ignore[arg-type]
        ref=kw.get("ref"),  # type: ignore[arg-type]
        content_hash=f"{n:012x}",
    )


CITATIONS = (
    _cite(
        1,
        "memory",
        "markdown",
        "## Database\nWe chose Postgres for the event store: we need row-level locks for the "
        "outbox and logical replication to the analytics replica.",
        1.0,
        ref="MEMORY.md#Database",
        rank=1,
        source_score=1.0,
    ),
    _cite(
        2,
        "chitta",
        "chitta",
        "Decision (2026-03-02): SQLite stays for the local cache only; Postgres 16 is the "
        "system of record. Reviewed by Ana and Joe.",
        0.92,
        ref="01JQ4Z8X2M7V",
        rank=1,
        source_score=0.873,
    ),
    _cite(
        3,
        "session",
        "sqlite_fts",
        "user: why not keep SQLite? assistant: a single writer is fine for the cache, but the "
        "outbox needs concurrent writers — " + "very-long-token-" * 30 + "end.",
        0.55,
        ref="messages:4812",
        rank=2,
        source_score=-8.512,
    ),
)

SOURCES = {
    "memory": SourceStats(count=2, max_score=1.0, avg_score=0.75),
    "chitta": SourceStats(count=3, max_score=0.873, avg_score=0.61),
    "session": SourceStats(count=4, max_score=-8.512, avg_score=-10.25),
}

CHUNKS = tuple(
    Chunk(source=c.source, text=c.content, rank=c.rank, score=c.source_score, ref=c.ref)
    for c in CITATIONS
)

MODEL = CitedAnswer(
    query="Which database did we choose for the event store, and why?",
    synthesized_answer=(
        "We chose Postgres for the event store [1], because the outbox needs row-level locks "
        "and concurrent writers [1][3]. SQLite remains only as the local cache [2]."
    ),
    abstained=False,
    abstention_reason=None,
    citations=CITATIONS,
    sources=SOURCES,
    chunks=CHUNKS,
    errors=(),
    timestamp="2026-06-22T22:04:16Z",
    answer_mode="model",
    model="openai:qwen2.5-7b-instruct",
    timing_ms={"sources": 41.7, "merge": 0.4, "synthesis": 1830.2},
)

EXTRACTIVE = replace(
    MODEL,
    synthesized_answer=(
        "We chose Postgres for the event store: we need row-level locks for the outbox and "
        "logical replication to the analytics replica. [1]\n"
        "Decision (2026-03-02): SQLite stays for the local cache only; Postgres 16 is the "
        "system of record. [2]"
    ),
    answer_mode="extractive",
    model=None,
)

WITH_ERRORS = replace(
    EXTRACTIVE,
    errors=(
        "hindsight: HTTP Error 404: Not Found",
        "openai:qwen2.5-7b-instruct: timed out after 30.0 s",
        "ollama:qwen2.5:7b: connection refused (127.0.0.1:11434)",
    ),
)

ABSTAINED = CitedAnswer(
    query="What is the on-call rotation for the billing team?",
    synthesized_answer=None,
    abstained=True,
    abstention_reason="Insufficient sources (1 < 2). Only one source returned results.",
    citations=CITATIONS[1:3],
    sources={"chitta": SourceStats(count=2, max_score=0.41, avg_score=0.38)},
    chunks=CHUNKS[1:3],
    errors=("session: database is locked",),
    timestamp="2026-06-22T22:05:01Z",
    answer_mode="none",
)

NOTHING = CitedAnswer(
    query="quarterly OKRs",
    synthesized_answer=None,
    abstained=True,
    abstention_reason="No results from any memory store.",
    citations=(),
    sources={},
    chunks=(),
    errors=(),
    timestamp="2026-06-22T22:06:00Z",
    answer_mode="none",
)

EVIL = "<script>alert('x')</script>\"><img src=https://evil.example/p.png onerror=alert(1)>"
HOSTILE = CitedAnswer(
    query=f"what about {EVIL} & </title><style>body{{display:none}}</style>",
    synthesized_answer=f"See [1] and [2, 9] but not [9]. {EVIL} [1]</a><a href='https://x'>",
    abstained=False,
    abstention_reason=None,
    citations=(
        _cite(1, "<b>src</b>", "http", f"content {EVIL} [2]", 1.0, ref=f'"><a href="{EVIL}'),
        _cite(2, "notes", "markdown", "</li></ol><script>document.write(1)</script>", 0.4),
    ),
    sources={"<b>src</b>": SourceStats(1, 1.0, 1.0), "notes": SourceStats(1, 0.3, 0.3)},
    chunks=(),
    errors=(f"<b>src</b>: {EVIL}",),
    timestamp="<script>",
    answer_mode="model",
    model=f"openai:{EVIL}",
)

HOSTILE_ABSTAINED = replace(
    HOSTILE,
    synthesized_answer=None,
    abstained=True,
    abstention_reason=f"NO_ANSWER_AVAILABLE: {EVIL} [1]",
)

ANSWERS = {
    "model": MODEL,
    "extractive": EXTRACTIVE,
    "errors": WITH_ERRORS,
    "abstained": ABSTAINED,
    "nothing": NOTHING,
    "hostile": HOSTILE,
    "hostile_abstained": HOSTILE_ABSTAINED,
}

# --- a small DOM built with the standard library's parser -------------------------------------

VOID = {"meta", "link", "br", "img", "hr", "input", "source", "wbr", "area", "base", "col"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> list[Node]:
        out = [self]
        for c in self.children:
            if isinstance(c, Node):
                out.extend(c.walk())
        return out

    def find(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.walk()
            if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
        ]

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        # Pop to the matching open element; a stray end tag (none open) is ignored, as browsers do.
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(markup: str) -> Node:
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    return builder.root


def by_id(dom: Node) -> dict[str, Node]:
    return {n.attrs["id"]: n for n in dom.walk() if "id" in n.attrs}


def assert_links_resolve(dom: Node, answer: CitedAnswer) -> None:
    """Every link is an in-page citation link, and its target exists and is that citation."""
    ids = by_id(dom)
    links = dom.find("a")
    for a in links:
        href = a.attrs.get("href", "")
        assert re.fullmatch(r"#cite-\d+", href), href
        target = ids[href[1:]]
        assert target.tag == "li"
    real = {f"cite-{c.citation_id}" for c in answer.citations}
    assert {a.attrs["href"][1:] for a in links} <= real


def answer_text(dom: Node) -> str:
    (text,) = dom.find("div", "text")
    return text.text()


# --- the markup ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ANSWERS)
def test_page_is_self_contained(name: str) -> None:
    page = render_html(ANSWERS[name])
    dom = parse(page)
    tags = {n.tag for n in dom.walk()} - {"#document"}
    # Nothing that can load or run anything: no script, img, link, iframe, object, form.
    assert tags <= {
        "html", "head", "meta", "title", "style", "body", "main", "header", "footer",
        "section", "h1", "h2", "p", "span", "strong", "div", "a", "ol", "ul", "li",
        "table", "thead", "tbody", "tr", "th", "td", "time",
    }  # fmt: skip
    for node in dom.walk():
        assert not {"src", "style", "srcset", "action"} & set(node.attrs), node
        assert not any(k.startswith("on") for k in node.attrs), node
    (style,) = dom.find("style")
    assert "url(" not in style.text() and "@import" not in style.text()
    metas = {m.attrs.get("http-equiv", m.attrs.get("charset", "")): m for m in dom.find("meta")}
    assert "utf-8" in metas
    assert metas["Content-Security-Policy"].attrs["content"] == CSP
    assert "default-src 'none'" in CSP and "style-src 'unsafe-inline'" in CSP
    assert dom.find("title")[0].text().startswith("Cited recall: ")


@pytest.mark.parametrize("name", ["model", "extractive", "errors", "abstained", "nothing"])
def test_no_http_reference_anywhere(name: str) -> None:
    # These answers carry no URL of their own, so any http(s):// would be the template's.
    page = render_html(ANSWERS[name])
    assert "http://" not in page and "https://" not in page


@pytest.mark.parametrize("answer", [HOSTILE, HOSTILE_ABSTAINED], ids=["answered", "abstained"])
def test_hostile_content_is_escaped_and_shown_verbatim(answer: CitedAnswer) -> None:
    page = render_html(answer)
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    dom = parse(page)
    assert_links_resolve(dom, answer)
    cites = by_id(dom)
    for c in answer.citations:
        (content,) = cites[f"cite-{c.citation_id}"].find("div", "content")
        assert content.text() == c.content
    assert answer.query in dom.find("p", "query")[0].text()
    assert dom.find("ul", "errors")[0].text() == answer.errors[0]
    assert EVIL in dom.find("p", "mode")[0].text()  # the model name, escaped too
    if answer.abstained:
        # The reason is shown as given; its "[1]" is not linked (only the answer's markers are).
        assert dom.find("span", "reason")[0].text() == answer.abstention_reason
        assert dom.find("a") == []
    else:
        assert answer_text(dom) == answer.synthesized_answer
        # The citation's own "[2]" is content, not a link; the answer's [9] names no citation.
        assert [a.attrs["href"] for a in dom.find("a")] == ["#cite-1", "#cite-2", "#cite-1"]


def test_markers_link_only_real_citations() -> None:
    ids = {1, 2}
    assert linkify("[1] [2]", ids) == (
        '<a class="cite" href="#cite-1">[1]</a> <a class="cite" href="#cite-2">[2]</a>'
    )
    assert linkify("[3] [0] [x] [ 1 ] [1.5]", ids) == "[3] [0] [x] [ 1 ] [1.5]"
    assert linkify("[01]", ids) == '<a class="cite" href="#cite-1">[01]</a>'
    assert linkify("[1, 3,2]", ids) == (
        '[<a class="cite" href="#cite-1">1</a>, 3, <a class="cite" href="#cite-2">2</a>]'
    )
    assert linkify("[1][2]", set()) == "[1][2]"
    # A model's garbage: int() of over 4,300 digits would raise; other scripts' digits are text.
    huge = "[" + "1" * 5000 + "]"
    assert linkify(huge, ids) == huge
    assert linkify("[١]", ids) == "[١]"


def test_model_answer_links_each_marker_to_its_citation() -> None:
    dom = parse(render_html(MODEL))
    assert answer_text(dom) == MODEL.synthesized_answer
    hrefs = [a.attrs["href"] for a in dom.find("div", "text")[0].find("a")]
    assert hrefs == ["#cite-1", "#cite-1", "#cite-3", "#cite-2"]
    assert_links_resolve(dom, MODEL)
    mode = dom.find("p", "mode")[0]
    assert mode.attrs["data-mode"] == "model" and "openai:qwen2.5-7b-instruct" in mode.text()
    assert not dom.find("div", "abstained")


def test_extractive_answer_is_marked_as_such() -> None:
    dom = parse(render_html(EXTRACTIVE))
    mode = dom.find("p", "mode")[0]
    assert mode.attrs["data-mode"] == "extractive" and "extractive" in mode.text()
    assert answer_text(dom) == EXTRACTIVE.synthesized_answer
    assert dom.find("div", "answer")[0].classes == ["answer", "extractive"]


def test_abstained_page_shows_reason_and_citations() -> None:
    dom = parse(render_html(ABSTAINED))
    (box,) = dom.find("div", "abstained")
    assert "Abstained" in box.text()
    assert dom.find("span", "reason")[0].text() == ABSTAINED.abstention_reason
    assert dom.find("p", "mode")[0].attrs["data-mode"] == "none"
    assert not dom.find("div", "answer")
    cites = by_id(dom)
    assert [c.citation_id for c in ABSTAINED.citations] == [2, 3]
    for c in ABSTAINED.citations:
        item = cites[f"cite-{c.citation_id}"]
        assert item.find("div", "content")[0].text() == c.content
        assert f"score {c.rrf_score:.2f}" in item.text() and c.ref in item.text()


def test_empty_result_still_renders_every_section() -> None:
    dom = parse(render_html(NOTHING))
    ids = by_id(dom)
    assert {"answer", "citations", "sources", "errors"} <= set(ids)
    assert "No results from any memory store." in ids["answer"].text()
    assert "No citations." in ids["citations"].text()


def test_sources_table_and_errors() -> None:
    dom = parse(render_html(WITH_ERRORS))
    rows = [[td.text() for td in tr.find("td")] for tr in dom.find("tbody")[0].find("tr")]
    assert rows == [
        ["memory", "2", "1.000", "0.750"],
        ["chitta", "3", "0.873", "0.610"],
        ["session", "4", "-8.512", "-10.250"],
    ]
    assert [li.text() for li in dom.find("ul", "errors")[0].find("li")] == list(WITH_ERRORS.errors)
    footer = dom.find("footer")[0].text()
    assert "2026-06-22T22:04:16Z" in footer and "3 chunks" in footer and "3 citations" in footer


# --- in a real browser ----------------------------------------------------------------------------

#: chromium writes each console message (log, error, uncaught exception, CSP violation) to
#: stderr under --enable-logging=stderr as "[pid:tid:time:INFO:CONSOLE:line] "text", source:
#: url (line)" (older builds: "CONSOLE(line)"), whatever its level.
CONSOLE_LINE = re.compile(r":CONSOLE[:(]\d+")


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium; run `make browser` "
            "(.ci/install-chromium, which `make test` runs)"
        )
    return CHROMIUM


def run_chromium(
    chromium: Path, profile: Path, page: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """Runs headless chromium on a file, offline: no sync, updates or background requests."""
    return subprocess.run(
        [
            str(chromium),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=True,
    )


def console_messages(stderr: str) -> list[str]:
    """The page's console messages in chromium's log; the report has no script, so any one of
    them (an uncaught error, a blocked load) is a fault."""
    return [line for line in stderr.splitlines() if CONSOLE_LINE.search(line) or "Uncaught" in line]


def write(tmp_path: Path, name: str, markup: str) -> Path:
    page = tmp_path / f"{name}.html"
    page.write_text(markup, encoding="utf-8")
    return page


@pytest.mark.browser
def test_console_detector_sees_errors_and_blocked_loads(chromium: Path, tmp_path: Path) -> None:
    # The positive control: without it, an empty console could mean a blind detector.
    broken = write(
        tmp_path,
        "broken",
        '<!DOCTYPE html><meta charset="utf-8"><title>t</title>'
        "<script>console.error('boom'); throw new Error('uncaught-thing');</script>",
    )
    out = run_chromium(chromium, tmp_path / "p1", broken, "--dump-dom")
    messages = console_messages(out.stderr)
    assert any("boom" in m for m in messages) and any("Uncaught" in m for m in messages)
    # And the report's CSP blocks what an escaping bug would let in, without a network request.
    leaky = render_html(MODEL).replace(
        "<main>", '<main><img src="https://example.invalid/x.png"><script>1</script>', 1
    )
    out = run_chromium(chromium, tmp_path / "p2", write(tmp_path, "leaky", leaky), "--dump-dom")
    blocked = [m for m in console_messages(out.stderr) if "Content Security Policy" in m]
    assert any("example.invalid" in m for m in blocked) and any("script" in m for m in blocked)


@pytest.mark.browser
@pytest.mark.parametrize(
    "name", ["model", "extractive", "errors", "abstained", "hostile", "hostile_abstained"]
)
def test_browser_builds_the_page_with_no_console_message(
    chromium: Path, tmp_path: Path, name: str
) -> None:
    answer = ANSWERS[name]
    page = write(tmp_path, name, render_html(answer))
    out = run_chromium(chromium, tmp_path / "profile", page, "--dump-dom")
    assert console_messages(out.stderr) == []
    dom = parse(out.stdout)  # the DOM chromium built, serialised after load
    assert dom.find("title") and not dom.find("script") and not dom.find("img")
    if answer.synthesized_answer:
        assert answer_text(dom) == answer.synthesized_answer
    if answer.abstained:
        assert dom.find("span", "reason")[0].text() == answer.abstention_reason
    items = by_id(dom)
    for c in answer.citations:
        (content,) = items[f"cite-{c.citation_id}"].find("div", "content")
        assert content.text() == c.content
    assert_links_resolve(dom, answer)
    if answer.synthesized_answer and answer.citations:
        assert dom.find("div", "text")[0].find("a")  # the markers did become links


@pytest.mark.browser
def test_screenshot_is_dark_and_not_blank(chromium: Path, tmp_path: Path) -> None:
    page = write(tmp_path, "abstained", render_html(ABSTAINED))
    shot = tmp_path / "shot.png"
    out = run_chromium(
        chromium,
        tmp_path / "profile",
        page,
        f"--screenshot={shot}",
        "--window-size=1200,1600",
        "--hide-scrollbars",
    )
    assert console_messages(out.stderr) == []
    assert shot.stat().st_size > 10_000  # text, boxes and a table, not an empty canvas
    width, height, rows = png_rows(shot.read_bytes(), 400)
    assert (width, height) == (1200, 1600)
    pixels = [px for row in rows for px in row]
    luminance = sum(0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in pixels) / len(pixels)
    assert luminance < 60, luminance  # a dark page
    assert max(max(p) for p in pixels) > 200  # with bright text on it
    assert len(set(pixels)) > 20  # anti-aliased text, not one flat colour


def png_rows(data: bytes, count: int) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and the first ``count`` rows of an 8-bit RGB(A) PNG, unfiltered (RFC 2083)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, rows = bytearray(stride), []
    for y in range(min(count, height)):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return width, height, rows

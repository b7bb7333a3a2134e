"""The self-contained HTML report of a cited answer (``chitta cited-recall --html``).

One page, inline CSS only, no script and no external asset: a Content-Security-Policy meta tag
forbids every load, so the report opens the same offline, from a mail attachment or a ticket.
Everything taken from the answer is HTML-escaped; citation markers are linked after escaping."""

from __future__ import annotations

import re
from html import escape

from chitta.cited.base import Citation, CitedAnswer, SourceStats

#: Forbids every load; the inline <style> is the one thing allowed. base-uri and form-action
#: do not fall back to default-src, so they are closed by name.
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

#: "[3]" or "[1, 2]": the seed's inline markers, and the list form models also write. ASCII
#: digits, at most 6: the answer is a model's text, and int() of thousands of digits raises.
_MARKER = re.compile(r"\[([0-9]{1,6}(?:\s*,\s*[0-9]{1,6})*)\]")

_MODE_LABEL = {
    "model": "Answer mode: model",
    "extractive": "Answer mode: extractive (no model answered; sentences quoted from citations)",
    "none": "Answer mode: none (no synthesis)",
}

_CSS = """
:root { color-scheme: dark; }
* { box-sizing: border-box; }
body { margin: 0; background: #101317; color: #e4e7eb; line-height: 1.55;
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", "Liberation Sans", sans-serif; }
main { max-width: 60rem; margin: 0 auto; padding: 2rem 1.25rem 3rem; overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .75rem; color: #c9d1d9;
  border-bottom: 1px solid #2d333b; padding-bottom: .3rem; }
.query { font-size: 1.2rem; color: #ffffff; margin: .25rem 0 0; }
.muted, .meta { color: #9aa5b1; font-size: .9rem; }
.text, .content { white-space: pre-wrap; }
.answer { background: #161b22; border: 1px solid #2d333b; border-left: 4px solid #58a6ff;
  border-radius: 6px; padding: 1rem 1.25rem; }
.answer.extractive { border-left-color: #a371f7; }
.mode { margin: 0 0 .75rem; font-size: .9rem; color: #9aa5b1; }
.abstained { background: #2a2111; border: 1px solid #6e5526; border-left: 4px solid #f0b35a;
  border-radius: 6px; padding: 1rem 1.25rem; }
.abstained p { margin: .25rem 0; }
.abstained strong { color: #f6c177; }
a { color: #79c0ff; }
a.cite { text-decoration: none; font-weight: 600; }
a.cite:hover, a.cite:focus { text-decoration: underline; }
ol.citations { list-style: none; padding: 0; margin: 0; }
ol.citations li { background: #161b22; border: 1px solid #2d333b; border-radius: 6px;
  padding: .75rem 1rem; margin: 0 0 .75rem; }
ol.citations li:target { border-color: #58a6ff; box-shadow: 0 0 0 2px #1f6feb55; }
.cid { display: inline-block; min-width: 2.5rem; font-weight: 700; color: #79c0ff; }
.source { font-weight: 600; color: #e4e7eb; }
.content { margin: .5rem 0 0; color: #d5dbe1; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #2d333b; }
th { color: #9aa5b1; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
ul.errors { padding-left: 1.25rem; color: #ffa198; }
footer { margin-top: 2.5rem; }
"""


def render_html(answer: CitedAnswer) -> str:
    """The whole report for ``answer`` as one self-contained HTML document."""
    ids = {c.citation_id for c in answer.citations}
    body = "\n".join(
        [
            _header(answer),
            _answer_section(answer, ids),
            _citations_section(answer.citations),
            _sources_section(answer.sources),
            _errors_section(answer.errors),
            _footer(answer),
        ]
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n'
        '<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>Cited recall: {escape(_shorten(answer.query, 80))}</title>\n"
        f"<style>{_CSS}</style>\n"
        f"</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def linkify(escaped: str, ids: set[int]) -> str:
    """Turns each marker ``[N]`` in already-escaped text into a link to citation N.

    Only ids in ``ids`` are linked; a marker naming no citation stays plain text, so a model
    that invents "[9]" gets no dangling link. In a list marker "[1, 2]" each real id is linked.
    """

    def link(n: str, text: str) -> str:
        # int(n): "[01]" names citation 1, whose anchor is "cite-1".
        return f'<a class="cite" href="#cite-{int(n)}">{text}</a>' if int(n) in ids else text

    def replace(m: re.Match[str]) -> str:
        numbers = [n.strip() for n in m.group(1).split(",")]
        if len(numbers) == 1:
            return link(numbers[0], m.group(0))
        return "[" + ", ".join(link(n, n) for n in numbers) + "]"

    return _MARKER.sub(replace, escaped)


def _header(answer: CitedAnswer) -> str:
    return (
        "<header>\n<h1>Cited recall</h1>\n"
        f'<p class="query"><span class="muted">Query:</span> {escape(answer.query)}</p>\n'
        "</header>"
    )


def _answer_section(answer: CitedAnswer, ids: set[int]) -> str:
    mode = answer.answer_mode if answer.answer_mode in _MODE_LABEL else "none"
    label = _MODE_LABEL[mode]
    if mode == "model" and answer.model:
        label += f" ({answer.model})"
    parts = [
        '<section id="answer">',
        "<h2>Answer</h2>",
        f'<p class="mode" data-mode="{mode}">{escape(label)}</p>',
    ]
    if answer.abstained:
        reason = answer.abstention_reason or "no reason given"
        parts.append(
            '<div class="abstained" role="note">'
            "<p><strong>Abstained: no answer.</strong> "
            f'<span class="reason">{escape(reason)}</span></p>'
            '<p class="muted">What was found is still listed under Citations.</p></div>'
        )
    if answer.synthesized_answer:
        text = linkify(escape(answer.synthesized_answer), ids)
        parts.append(f'<div class="answer {mode}"><div class="text">{text}</div></div>')
    elif not answer.abstained:
        parts.append('<p class="muted">The answer is empty.</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _citations_section(citations: tuple[Citation, ...]) -> str:
    parts = ['<section id="citations">', f"<h2>Citations ({len(citations)})</h2>"]
    if not citations:
        parts.append('<p class="muted">No citations.</p>')
    else:
        parts.append('<ol class="citations">')
        parts.extend(_citation(c) for c in citations)
        parts.append("</ol>")
    parts.append("</section>")
    return "\n".join(parts)


def _citation(c: Citation) -> str:
    ref = f' · <span class="ref">{escape(c.ref)}</span>' if c.ref else ""
    return (
        f'<li id="cite-{c.citation_id}">'
        f'<div class="meta"><span class="cid">[{c.citation_id}]</span>'
        f'<span class="source">{escape(c.source)}</span> ({escape(c.source_kind)})'
        f" · score {c.rrf_score:.2f} · rank {c.rank} in source"
        f" · source score {_number(c.source_score)}{ref}</div>"
        f'<div class="content">{escape(c.content)}</div></li>'
    )


def _sources_section(sources: dict[str, SourceStats]) -> str:
    parts = ['<section id="sources">', "<h2>Sources</h2>"]
    if not sources:
        parts.append('<p class="muted">No source returned results.</p>')
    else:
        parts.append(
            "<table><thead><tr><th>Source</th><th class=num>Chunks</th>"
            "<th class=num>Max score</th><th class=num>Avg score</th></tr></thead><tbody>"
        )
        parts.extend(
            f"<tr><td>{escape(name)}</td><td class=num>{s.count}</td>"
            f"<td class=num>{_number(s.max_score)}</td>"
            f"<td class=num>{_number(s.avg_score)}</td></tr>"
            for name, s in sources.items()
        )
        parts.append("</tbody></table>")
        parts.append('<p class="muted">Scores are each source\'s own (cosine, BM25, ...).</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _errors_section(errors: tuple[str, ...]) -> str:
    if not errors:
        items = '<p class="muted">None.</p>'
    else:
        items = '<ul class="errors">' + "".join(f"<li>{escape(e)}</li>" for e in errors) + "</ul>"
    return f'<section id="errors"><h2>Errors ({len(errors)})</h2>{items}</section>'


def _footer(answer: CitedAnswer) -> str:
    timing = ", ".join(f"{escape(k)} {v:.0f} ms" for k, v in answer.timing_ms.items())
    return (
        '<footer class="muted">'
        f"<p>Generated <time>{escape(answer.timestamp)}</time>"
        f" · {len(answer.chunks)} chunks before the merge, {len(answer.citations)} citations"
        f"{' · ' + timing if timing else ''}</p></footer>"
    )


def _number(x: float) -> str:
    """A source's own score, three decimals (cosine 0.873, BM25 -8.512)."""
    return f"{x:.3f}"


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"

"""The coverage ledger: which parts of a question the returned records hold.

Seed 002 §1.5 ("The coverage ledger"), the ``coverage`` field of the recall trace (§1.2). A
traced recall records it after its answer is final and nothing in the recall reads it: it is
the instrument for a later stage that would fetch what an answer does not yet cover. It holds
no text: a part is its span in the normalized question and its kind, a record is its ref.

The question is normalized (:func:`normalize`: NFKC, then lower case; ``nfkc-lower``) and cut
by script into *parts* (:func:`parts`), with no dependency:

- ``kanji``: a run of two or more kanji — the CJK unified ideographs, every block of them, and
  the marks 々 (repeats the kanji before it: 人々, 佐々木), 〆 and 〇 (a kanji numeral zero:
  二〇二六), which are written inside kanji words.
- ``katakana``: a run of two or more katakana — the katakana block with the prolonged sound
  mark ー and the iteration marks ヽヾ, and the phonetic extensions (ㇰ…ㇿ); not the middle dot
  ・ nor the double hyphen ゠, which separate words (ジョン・スミス is two parts). Half-width
  katakana are full-width after NFKC.
- ``identifier``: an ASCII identifier of two or more characters (:data:`IDENTIFIER`).
- Hiragana (particles and endings) and every other character separate parts and are none; a
  lone kanji or katakana is not a part.

A part repeated in the question (the same text) counts once, at its first appearance. Parts
are in order of first appearance; the first :data:`MAX_PARTS` distinct ones are kept and the
others counted (``parts_omitted``).

A part is *covered* by a record when it is a substring of the record's full stored text,
normalized the same way (so ``Kafka`` in a record covers ``kafka`` in a question, and a
full-width ``ｂｕｇ－２１８`` covers ``bug-218``). Substring means a part inside a longer word
counts: ``kafka`` is covered by ``kafkaesque``, 東京 by 東京都.

What it does not say (§1.5): an uncovered part is not proof that the answer is missing. A
record can state the same fact in other words, and in English every word of two or more
letters is a part, common words included; measured, uncovered parts did not tell a question
whose answer is absent from one whose answer is present.
"""

from __future__ import annotations

import logging
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: The name of :func:`normalize`, recorded as the ledger's ``normalization``.
NORMALIZATION = "nfkc-lower"
#: At most this many parts are kept; the rest are counted in ``parts_omitted``.
MAX_PARTS = 32
KANJI = "kanji"
KATAKANA = "katakana"
IDENTIFIER_KIND = "identifier"
KINDS = (KANJI, KATAKANA, IDENTIFIER_KIND)

#: Kanji: the marks 々〆〇 (U+3005–U+3007) and the CJK unified ideographs: the basic block;
#: extension A; the twelve unified ideographs of the compatibility block (NFKC maps the
#: block's other characters to unified ones and leaves these alone); extensions B to F and I
#: on the second plane (one range from U+2A700 to U+2EE5F, unassigned gaps included); G and H
#: on the third.
_KANJI = (
    "\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff"
    "\ufa0e\ufa0f\ufa11\ufa13\ufa14\ufa1f\ufa21\ufa23\ufa24\ufa27-\ufa29"
    "\U00020000-\U0002a6df\U0002a700-\U0002ee5f\U00030000-\U000323af"
)
#: Katakana: U+30A1–U+30FA (the letters), U+30FC–U+30FF (ー, ヽ, ヾ, ヿ), U+31F0–U+31FF (the
#: phonetic extensions). U+30A0 ゠ and U+30FB ・ are punctuation and separate parts.
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
#: Hiragana (U+3041–U+309F): not parts, but like kanji and katakana they may stand directly
#: beside an identifier (Japanese writes バグbug-218を without spaces).
_HIRAGANA = "\u3041-\u309f"

#: An ASCII identifier, matched in the normalized question:
#:
#: - a *word* — one or more ASCII letters, digits or ``_`` — or several words joined by runs
#:   of the connectors ``. - / \ : # + @`` with no space: ``2.5.5a1``, ``bug-218``,
#:   ``src/chitta/api.py``, ``c:\temp``, ``localhost:8080``, ``user@example.com``;
#: - optionally led by ``#`` or ``@`` (``#354``, ``@types/node``), by ``/``, ``~/``, ``./`` or
#:   ``../`` (``/etc/hosts``), and then by one ``.`` not after another (``.env``,
#:   ``~/.bashrc``; an ellipsis is not a lead: ``...kafka`` gives ``kafka``);
#: - optionally ended by ``+`` signs or one ``#`` (``c++``, ``c#``).
#:
#: It ends at the last word character (or that ending), so punctuation after it is not part of
#: it: ``api.py?`` gives ``api.py``, ``2.5.5a1.`` gives ``2.5.5a1``, ``kafka:`` gives ``kafka``.
#: Directly beside it (before the lead, after the ending) may stand kanji, kana, or anything
#: that is neither a letter nor a digit; never another letter or digit: ``café`` and
#: ``naïve`` are not ASCII words and give no part (a word is taken whole or not at all). An
#: apostrophe separates words (``don't`` gives ``don``). It has two characters or more
#: (checked after the match): ``a`` and ``7`` are not parts, ``#3`` and ``go`` are.
_WORD_CHAR = "A-Za-z0-9_"
_NEIGHBOUR = rf"[^\W{_WORD_CHAR}{_KANJI}{_KATAKANA}{_HIRAGANA}]|[{_WORD_CHAR}]"
IDENTIFIER = re.compile(
    rf"(?<!{_NEIGHBOUR})"  # not inside a word
    r"(?:[#@]|(?:~|\.{1,2})?/)?(?:(?<!\.)\.)?"  # the lead
    rf"(?>[{_WORD_CHAR}]+(?:[-./\\:#+@]+[{_WORD_CHAR}]+)*)"  # words and connectors, whole
    r"(?:\++|#)?"  # the ending
    rf"(?!{_NEIGHBOUR})"  # not followed by more of a word
)
_PART = re.compile(
    rf"(?P<{KANJI}>[{_KANJI}]{{2,}})"
    rf"|(?P<{KATAKANA}>[{_KATAKANA}]{{2,}})"
    rf"|(?P<{IDENTIFIER_KIND}>{IDENTIFIER.pattern})"
)


@dataclass(frozen=True, slots=True)
class Part:
    """A part of the normalized question: its span (``normalized[start:end]``) and kind."""

    span: tuple[int, int]
    kind: str

    def text(self, normalized: str) -> str:
        start, end = self.span
        return normalized[start:end]

    def as_dict(self) -> dict[str, Any]:
        return {"span": [self.span[0], self.span[1]], "kind": self.kind}


def normalize(text: str) -> str:
    """``text`` under NFKC, then in lower case (``nfkc-lower``): half-width katakana and
    full-width ASCII become their ordinary forms, ``Kafka`` becomes ``kafka``."""
    return unicodedata.normalize("NFKC", text).lower()


def parts(normalized: str) -> tuple[list[Part], int]:
    """The parts of a normalized question in order of first appearance, each distinct text
    once, at most :data:`MAX_PARTS` of them; and how many distinct parts were left out."""
    seen: set[str] = set()
    kept: list[Part] = []
    omitted = 0
    for match in _PART.finditer(normalized):
        text = match.group()
        if len(text) < 2 or text in seen:
            continue
        seen.add(text)
        if len(kept) < MAX_PARTS:
            kept.append(Part(match.span(), str(match.lastgroup)))
        else:
            omitted += 1
    return kept, omitted


def ledger(question: str, records: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The coverage ledger of ``question`` over ``records`` (``(ref, full stored text)`` in
    the order the response lists them): the fields of seed 002 §1.5, spans, kinds and refs
    only. A ref given twice is listed once per part."""
    normalized = normalize(question)
    found, omitted = parts(normalized)
    texts = [(ref, normalize(text)) for ref, text in records]
    covered_by: list[list[str]] = []
    for part in found:
        needle = part.text(normalized)
        covered_by.append(list(dict.fromkeys(ref for ref, text in texts if needle in text)))
    out: dict[str, Any] = {
        "normalization": NORMALIZATION,
        "parts": [part.as_dict() for part in found],
        "covered_by": covered_by,
        "uncovered": [i for i, refs in enumerate(covered_by) if not refs],
        "records": len(texts),
    }
    if omitted:
        out["parts_omitted"] = omitted
    return out


def safe_ledger(question: str, records: Sequence[tuple[str, str]]) -> tuple[dict[str, Any], float]:
    """:func:`ledger`, or ``{"error": <exception type>}`` when it cannot be built (the recall
    answers as it would have); and the time it took in ms (``timing_ms.coverage``)."""
    start = time.perf_counter()
    try:
        out = ledger(question, records)
    except Exception as exc:  # the ledger is recorded only: it never fails a recall (§1.5)
        # The type only: an exception's message could quote the question or a record.
        log.warning("coverage ledger not built: %s", type(exc).__name__)
        out = {"error": type(exc).__name__}
    return out, round((time.perf_counter() - start) * 1000, 3)

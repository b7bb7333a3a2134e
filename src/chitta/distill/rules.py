"""The model-free distiller's rules: which sentences of a turn state a correction, a
preference, a decision or a failure and its fix (issue 22, part 1; docs/distill.md).

Pure. A turn's text is split into sentences (at ``.``, ``!`` or ``?`` before a space, and at
line breaks); each sentence of 20-300 characters is tested by the rules below, in that
order, and the first that holds labels it. The rules err towards "not a fragment": a
fragment is stored, recalled and (a correction) looked up by key, so a wrong one costs more
than a missed one. Whose turn it is matters: an assistant's "Always warm up first" is
advice, a user's "Always use pnpm" is a preference, so corrections and preferences are read
only from the user's side. Never a fragment: a question, a conditional (``If you prefer
…``), a list item's heading (``**Avoid overposting:** …``), a sentence that holds what looks
like a credential (distill/secrets.py).

- **correction** (user): the sentence opens by correcting — ``No,`` / ``Nope`` /
  ``Actually,`` followed by what is right (``it's``, ``that was``, ``use``, ``you should``,
  ``I meant``: after anything else they are most often an answer, ``No, I haven't``, ``No,
  no pets right now``) / ``Wrong`` / ``That's not right`` / ``I meant`` / ``I said`` — or
  tells the assistant what not to do: ``don't`` / ``do not`` / ``please avoid`` / ``never``
  + a verb at its start (not an encouragement: ``don't worry``, ``don't forget``, ``don't
  let``, ``never give up``; not ``never been``, ``never tried``, ``never appears``: an
  answer or a description with its subject left out), ``stop`` + a gerund, ``make sure not
  to``, ``use X instead of Y``.
- **preference** (user): the speaker's own lasting taste or habit: ``I prefer``, ``I'd
  rather``, ``Always …`` (an instruction for every time), ``I (really) love / like / enjoy
  / hate / dislike / can't stand`` + what (not a reaction to something at hand: ``I love
  that / how / it / them / both / the sound of``; not a verb with nothing after it,
  ``something I love.``; not ``what I love``), ``I'm a (big) fan of``, ``my favo(u)rite
  <1-4 words> is / are``, ``I (always / never / usually) <verb>`` (not ``never knew /
  realized / thought``, not a feeling or a state: ``always feel``, ``always get``), ``I
  don't (like / eat / drink / use)``, ``I've always (liked / loved / preferred)``; not
  when the sentence is about what the assistant proposed (``I like the ideas you listed``,
  ``I like the draft``: a reaction).
- **decision** (either side): a first-person choice: ``I / we decided``, ``chose``, ``went
  with``, ``ended up (going with / choosing)``, ``opted for``, ``settled on``, ``switched
  to``, ``picked``; or, on the user's side, a first-person future (``I'll``, ``I will``,
  ``we'll``, ``I'm going to``) that gives its reason or its alternative (``because``,
  ``since``, ``so that``, ``to avoid``, ``instead of``, ``rather than``) and is not still
  weighing (``I'll consider``, ``look into``); an assistant's ``Since you asked, I'll
  suggest …`` is about the reply it is writing. Not ``picked up`` (bought), not ``went with
  my friend`` (company).
- **failure_fix** (either side): a failure (``error``, ``exception``, ``failed``, ``crash``,
  ``broke``, ``bug``, ``doesn't work``, ``traceback``, ``timed out``) and, in the same
  sentence, its cause or fix (``fixed``, ``solved``, ``resolved``, ``the fix``,
  ``workaround``, ``caused by``, ``because``, ``turned out``, ``by adding / removing /
  changing / setting / updating / using / upgrading / downgrading``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chitta.distill.secrets import looks_secret

LABELS = ("correction", "preference", "decision", "failure_fix")
#: A sentence's length in characters to be considered at all.
MIN_CHARS, MAX_CHARS = 20, 300
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = re.compile(r"^[\s\-*#>•]+|^\d+[.)]\s+")


def _words(*alternatives: str) -> str:
    return "(?:" + "|".join(alternatives) + ")"


_I = r"\bI(?:'m| am)?\b"
_QUESTION = re.compile(
    r"\?\s*$|^(?:who|what|when|where|why|how|which|can|could|would|should|do|does|did|is|"
    r"are|will|shall)\b",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(r"^(?:if|when|whether|unless)\b", re.IGNORECASE)
_HEADING = re.compile(r"\*\*\s*:|:\s*\*\*|^[^.!?]{1,60}\*\*")

#: What follows "No," / "Nope" / "Actually," in a correction: it says what is right ("No,
#: it's 5433", "No, use pnpm", "Actually, that was Tuesday"). Anything else after them is
#: most often an answer ("No, I haven't read it", "No, no pets right now", "No wonder").
_CORRECTS = _words(
    r"it(?:'s| is| was| should| needs)",
    r"that(?:'s| is| was)",
    "use",
    "you should",
    "you need",
    r"we (?:use|need|should)",
    "the correct",
    r"i (?:said|meant)",
)
_CORRECT_OPEN = re.compile(
    rf"^(?:(?:no|nope|actually)\b[,.!—–-]?\s*(?!that's (?:all|it|fine|ok)\b){_CORRECTS}\b"
    r"|wrong\b|that(?:'s| is) (?:not right|wrong|incorrect)|not quite\b|i meant\b|i said\b)",
    re.IGNORECASE,
)
#: After "don't" or "never": encouragement ("don't worry", "don't quit"), or a sentence
#: with its subject left out ("Don't know what I'd do without them").
_ENCOURAGE = _words(
    *("worry", "forget", "hesitate", "give up", "be afraid", "panic", "stress", "let"),
    *("quit", "stop", "lose", "know", "think", "care", "mind", "miss"),
)
#: "Never been there", "Never tried it": an answer with its subject left out.
_PARTICIPLE = (
    r"(?:\w+ed|been|done|seen|saw|heard|had|gone|went|known|knew|met|made|read|got|"
    r"thought|felt|came|took|taken|found)"
)
_CORRECT_TELL = re.compile(
    r"^(?:please\s+|and\s+|but\s+|also\s+|so\s+)?"
    rf"(?:(?:don't|do not|please avoid|avoid)\s+(?!{_ENCOURAGE}\b)"
    rf"|never\s+(?!{_ENCOURAGE}\b)(?!{_PARTICIPLE}\b)(?!\w*[^s]s\b)|stop\s+(?=\w+ing\b))[a-z]+",
    re.IGNORECASE,
)
_CORRECT_ANYWHERE = re.compile(
    r"\bmake sure (?:not|never) to\b|\bplease (?:don't|do not|stop|never)\b"
    r"|^use \S.{0,80}\b(?:instead of|not)\b",
    re.IGNORECASE,
)

#: What follows "I love" in a reaction to something at hand, not a lasting taste.
_REACTION = _words(
    "that",
    "how",
    "it",
    "this",
    "these",
    "those",
    "them",
    "him",
    "her",
    "you",
    "your",
    "when",
    "what you",
    "both",
    "all of",
    "the sound of",
    "the idea",
    "the look of",
    "the way",
)
_PREFER = re.compile(
    rf"(?<!what )(?<!which ){_I}\s+"
    r"(?:really\s+|much\s+|generally\s+|usually\s+|just\s+|absolutely\s+)?"
    rf"(?:prefer|'d rather|would rather|(?:love|like|enjoy|hate|dislike|can't stand|detest)"
    rf"(?!\s+{_REACTION}\b)(?!\s+to\s+(?:know|hear|see|learn|ask|get)\b)(?!\s*[.!?,;]|\s*$))\b"
    r"|\bI(?:'d| would) (?:much )?rather\b"
    r"|^(?:please\s+)?always\s+(?!(?:here|there|by|on|in|at|with|a|an|the|so|been|ready|"
    r"happy|glad|good|great|fun|nice)\b)[a-z]+"
    r"|\bI'?m a (?:big |huge |great )?fan of\b"
    r"|\bmy (?:absolute |all-time )?favou?rite (?:[\w'-]+ ){1,4}(?:is|are|has to be)\b"
    r"|\bI (?:always|never|usually|rarely) (?!(?:knew|realized|realised|thought|imagined|"
    r"expected|understood|noticed|get|got|give up|feel|felt|seem|am|was|have|had|make)\b)"
    r"[a-z]+"
    r"|\bI (?:don't|do not) (?:like|eat|drink|use|enjoy)\b"
    r"|\bI've always (?:liked|loved|preferred|enjoyed)\b",
    re.IGNORECASE,
)

#: A liking said of what the assistant just proposed: a reaction, not a lasting taste.
_PROPOSED = re.compile(
    r"\b(?:ideas?|suggestions?|options?|recommendations?|draft|you (?:provided|suggested|"
    r"mentioned|recommended|listed|shared)|you've (?:suggested|provided|mentioned|listed))\b",
    re.IGNORECASE,
)
#: A future that is still only weighed ("I'll consider", "I'll think about it").
_WEIGHED = re.compile(r"\b(?:consider|think about|look at|look into)\b", re.IGNORECASE)

_WE = r"\b(?:I|we)\b"
_DECIDE = re.compile(
    rf"{_WE}\s+(?:have\s+|'ve\s+|finally\s+|eventually\s+|just\s+)?"
    r"(?:decided|chose|opted for|settled on|switched to|picked(?! up\b)"
    r"|went with(?! (?:my|our|his|her|their|a friend|friends|family|them|him|her)\b))\b"
    r"|\bended up (?:going with|choosing|picking|with)\b"
    r"|\btook (?:us|me) a while to decide\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(r"\b(?:I'll|I will|we'll|we will|I'm going to|we're going to)\b", re.I)
_REASON = re.compile(
    r"\b(?:because|since|so that|to avoid|instead of|rather than|as it|as they)\b", re.I
)

_FAILURE = re.compile(
    r"\b(?:error|exception|failed|fails|failing|failure|crash(?:ed|es)?|broke|broken|bug|"
    r"doesn't work|didn't work|does not work|traceback|timed out|segfault)\b",
    re.IGNORECASE,
)
_FIX = re.compile(
    r"\b(?:fixed|fixes|solved|resolved|the fix|workaround|caused by|because|turned out|"
    r"by (?:adding|removing|changing|setting|updating|using|upgrading|downgrading|pinning|"
    r"restarting|reinstalling))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Fragment:
    """A sentence of a turn the rules picked: its label and its text, verbatim."""

    label: str
    text: str


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (list markers stripped) of a length the rules consider."""
    parts = (_LEAD.sub("", p).strip() for p in _SPLIT.split(text))
    return [p for p in parts if MIN_CHARS <= len(p) <= MAX_CHARS]


def classify(sentence: str, role: str) -> str | None:
    """The label of one sentence said by ``role`` (``user`` or ``assistant``), or None."""
    s = sentence.strip()
    if _QUESTION.search(s) or _CONDITIONAL.match(s) or _HEADING.search(s) or looks_secret(s):
        return None
    user = role == "user"
    if user and (_CORRECT_OPEN.match(s) or _CORRECT_TELL.match(s) or _CORRECT_ANYWHERE.search(s)):
        return "correction"
    if user and _PREFER.search(s) and not _PROPOSED.search(s):
        return "preference"
    # An assistant's "Since you asked, I'll suggest …" is about the reply it is writing.
    planned = user and _FUTURE.search(s) and _REASON.search(s) and not _WEIGHED.search(s)
    if _DECIDE.search(s) or planned:
        return "decision"
    if _FAILURE.search(s) and _FIX.search(s):
        return "failure_fix"
    return None


def fragments(text: str, role: str) -> list[Fragment]:
    """Every sentence of a turn's ``text`` that a rule labels, in order, each once."""
    out: dict[str, Fragment] = {}
    for sentence in sentences(text):
        label = classify(sentence, role)
        if label is not None and sentence not in out:
            out[sentence] = Fragment(label, sentence)
    return list(out.values())

"""Which injected memories an answer used: the test of "draws on" (issue 21).

The prompt hook puts a few memories into an agent's context; the Stop hook then sees the
assistant's answer. A memory the answer *draws on* was used, not merely shown, and memories
used in one answer are "used together": each pair gains Hebbian co-access weight (seed 001:
hebbian strength 0.03), which the graph lane spreads over (recall/lanes/graph.py).

The test is lexical and errs towards "not used", because a false link costs more than a
missed one (a wrong link pulls an unrelated memory into later recalls). Only the memory's
*own* words count: its distinctive words (not stop words) that the user's prompt did not
already say, since an answer that repeats the question's words says nothing about the
memory. A memory is drawn on when the answer repeats

- at least :data:`DRAWN_WORDS` of those own words and at least :data:`DRAWN_SHARE` of them; or
- at least :data:`MARKED_WORDS` of them of which one is *marked*: holds a digit (a port, a
  version, a date) or belongs to one of the memory's entities (store/entities.py: a name,
  an identifier, a quantity) — the words an answer cannot produce by chance.

So, for the prompt "How do I deploy?", the memory "Deploys go through ops/deploy.sh with
AWS_PROFILE=staging" is drawn on by the answer "Run ops/deploy.sh with the staging profile"
(it repeats ops, sh and staging; ops and sh are marked), and not by "Deployment is usually
scripted" (no word is compared by stem, and "deploy" was the prompt's).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chitta.diversity import distinctive
from chitta.store.entities import entities
from chitta.store.terms import words

#: Own words an answer must repeat, and the share of the memory's own words they must be.
DRAWN_WORDS = 3
DRAWN_SHARE = 0.3
#: Own words an answer must repeat when one of them is marked (a digit, an entity's word).
MARKED_WORDS = 2


@dataclass(frozen=True, slots=True)
class Usage:
    """What ``session_used`` found for one answer: how many memories the session's last
    prompt was given, which of them the answer drew on, and how many pairs were linked."""

    session: str
    given: int
    used: tuple[str, ...]
    linked: int


def own_words(memory: str, prompt: str = "") -> set[str]:
    """The memory's distinctive words that ``prompt`` did not say."""
    return distinctive(memory) - distinctive(prompt)


def _marked(memory: str) -> set[str]:
    """The memory's words that an answer cannot repeat by chance: those with a digit and
    those of its entities."""
    found = {w for w in words(memory) if any(ch.isdigit() for ch in w)}
    for entity in entities(memory):
        found |= words(entity)
    return found


def draws_on(memory: str, answer: str, prompt: str = "") -> bool:
    """Whether ``answer`` (to ``prompt``) draws on ``memory``, by the module's test."""
    own = own_words(memory, prompt)
    if not own:
        return False
    shared = own & distinctive(answer)
    if len(shared) >= max(DRAWN_WORDS, DRAWN_SHARE * len(own)):
        return True
    return len(shared) >= MARKED_WORDS and bool(shared & _marked(memory))


def drawn_on(memories: Iterable[tuple[str, str]], answer: str, prompt: str = "") -> list[str]:
    """The ids of ``memories`` ((id, text), in order) that ``answer`` draws on."""
    return [memory_id for memory_id, text in memories if draws_on(text, answer, prompt)]

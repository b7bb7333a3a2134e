"""A tiny LoCoMo-format corpus shared by the benchmark tests: four conversations of six
turns, two speakers each, one session, and the questions a test asks of them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

_PEOPLE = {
    "conv-a": (
        "Aurelio",
        "Brigitta",
        [
            "I adopted a grey greyhound called Pepper last spring",
            "My pottery class meets every Tuesday at the community hall",
            "We hiked the Dolomites in August and the weather held",
            "I switched jobs and now work as a marine biologist",
            "The sourdough starter finally doubled after a week",
            "My sister visits from Lisbon next month for the festival",
        ],
    ),
    "conv-b": (
        "Cosimo",
        "Dagny",
        [
            "I started learning the cello at the conservatory downtown",
            "Our team won the regional chess tournament on Saturday",
            "I planted tomatoes and basil on the balcony this year",
            "The vintage motorcycle needs a new carburettor again",
            "I volunteer at the animal shelter every other weekend",
            "We are saving up for a trip to Kyoto in the autumn",
        ],
    ),
    "conv-c": (
        "Evander",
        "Fenella",
        [
            "I finished my first marathon in under four hours",
            "The bakery on the corner closed after thirty years",
            "I am knitting a scarf for my grandmother's birthday",
            "Our book club is reading a novel about lighthouse keepers",
            "I repaired the garden shed roof before the storm",
            "My daughter learned to ride a bicycle without help",
        ],
    ),
    "conv-d": (
        "Gaspard",
        "Henrike",
        [
            "I bought a secondhand kayak for the summer lakes",
            "Our choir sings at the cathedral on Christmas Eve",
            "I am restoring an old oak dining table in the garage",
            "My nephew started at the engineering university in Delft",
            "We adopted two rescue cats named Miso and Tofu",
            "The orchard produced more plums than we could eat",
        ],
    ),
}


@dataclass(frozen=True)
class TinyLocomo:
    """The corpus: speakers and turns per conversation, and a writer of LoCoMo JSON."""

    people: Mapping[str, tuple[str, str, list[str]]]

    def write(self, path: Path, questions: Mapping[str, Sequence[str | tuple[str, int]]]) -> Path:
        """The conversations ``questions`` names, as a LoCoMo file at ``path``. A question is
        its text (``{a}`` and ``{b}`` are the speakers) or (text, category; default 4); its
        gold turn is the turn of the same index."""
        data = []
        for sid, asked in questions.items():
            a, b, lines = self.people[sid]
            turns = [{"speaker": a if i % 2 == 0 else b, "dia_id": f"D1:{i + 1}", "text": text}
                     for i, text in enumerate(lines)]  # fmt: skip
            qa = []
            for i, item in enumerate(asked):
                text, category = (item, 4) if isinstance(item, str) else item
                qa.append({"question": text.format(a=a, b=b), "answer": "x",
                           "evidence": [f"D1:{i + 1}"], "category": category})  # fmt: skip
            conversation = {
                "speaker_a": a,
                "speaker_b": b,
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": turns,
            }
            data.append({"sample_id": sid, "qa": qa, "conversation": conversation})
        path.write_text(json.dumps(data))
        return path


@pytest.fixture
def tiny_locomo() -> TinyLocomo:
    return TinyLocomo(_PEOPLE)

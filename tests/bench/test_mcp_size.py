"""The MCP budget (issue 16, part 5), through the real `chitta mcp` and the SDK's stdio client:
the tool definitions stay within 6,000 characters, and a compact recall reply is mostly
memory text. The store is a small LoCoMo-format conversation whose turns are about as long
as LoCoMo's (its median turn is 155 characters)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from chitta.bench import mcp_size

TURNS = [
    "I finally signed up for the evening pottery course at the community hall; the teacher "
    "says my bowls are getting less lopsided every week, which is encouraging.",
    "We spent the whole of August hiking in the Dolomites. The weather held for twelve days "
    "straight and we slept in mountain huts above two thousand metres most nights.",
    "My sister is flying in from Lisbon next month for the music festival, so I am clearing "
    "out the spare room and buying a proper mattress for the sofa bed.",
    "The sourdough starter doubled at last after a week of feeding it rye flour twice a day; "
    "the first loaf came out dense but the second one had a lovely open crumb.",
    "I switched jobs in the spring and now work as a marine biologist at the coastal "
    "research station, counting seagrass shoots and tagging young rays.",
    "Our book club picked a thousand-page Russian novel for the summer, and honestly I am "
    "only on chapter nine, but the dinner party scenes are wonderful.",
    "Pepper, the grey greyhound we adopted last spring, has learned to open the back door "
    "with her nose, so we had to put a bolt on it before she let the cat out.",
    "I have been volunteering at the animal shelter every other weekend, mostly walking the "
    "older dogs that nobody picks and cleaning out the rabbit runs.",
    "We are saving up for a trip to Kyoto in the autumn to see the maple leaves turn, and I "
    "am practising my Japanese every morning on the train to work.",
    "The vintage motorcycle needs a new carburettor again; the mechanic says the parts come "
    "from a single workshop in Bologna and take about six weeks to arrive.",
    "My daughter started violin lessons at the conservatory downtown and practises scales "
    "in the kitchen every evening while I cook, which the neighbours tolerate kindly.",
    "I planted tomatoes, basil and three kinds of chillies on the balcony this year, and the "
    "tomatoes are already taller than the railing by the end of June.",
]
QUESTIONS = [
    "Where did they go hiking in August?",
    "What job does the speaker have now?",
    "What did the greyhound learn to do?",
    "When is the trip to Kyoto?",
]


def locomo_file(path: Path) -> Path:
    """One LoCoMo-format conversation of the turns above, in one session."""
    session = [{"speaker": "Ada" if i % 2 else "Ben", "dia_id": f"D1:{i + 1}", "text": text}
               for i, text in enumerate(TURNS)]  # fmt: skip
    qa = [{"question": q, "answer": "-", "evidence": ["D1:1"], "category": 1} for q in QUESTIONS]
    conv = {"speaker_a": "Ben", "speaker_b": "Ada", "session_1": session,
            "session_1_date_time": "1:56 pm on 8 May, 2023"}  # fmt: skip
    path.write_text(json.dumps([{"sample_id": "conv-t", "conversation": conv, "qa": qa}]))
    return path


def test_the_tool_list_and_a_recall_reply_stay_within_the_budget(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = mcp_size.build_store(home, locomo_file(tmp_path / "t.json"), "conv-t", tmp_path)
    assert store["memories"] == len(TURNS)
    try:
        figures = anyio.run(
            lambda: mcp_size.measure(home, store["questions"], realm=mcp_size.REALM, limit=10)
        )
    finally:
        mcp_size.stop_daemon(home)
    summary = mcp_size.summary(figures)
    assert figures["tools"] == 12
    assert summary["definitions_chars"] <= mcp_size.DEFINITIONS_BUDGET, figures["per_tool_chars"]
    # No code indexed: the code tool is not listed; where it is, one tool's worth more.
    assert "code" not in figures["per_tool_chars"]
    assert 0 < summary["definitions_with_code_chars"] - summary["definitions_chars"] <= 600
    # Every question found rows, and most of what the model reads is the memories' own text.
    assert all(r["memory_chars"] > 0 for r in figures["replies"]), figures["replies"]
    assert summary["recall_memory_share"] >= mcp_size.MEMORY_SHARE_AIM, summary
    assert "| tool definitions" in mcp_size.markdown(
        {"command": "t", "commit": None, "summary": summary, "figures": figures,
         "settings": {"limit": 10, "conversation": "conv-t", "memories": len(TURNS),
                      "questions": len(QUESTIONS)}}
    )  # fmt: skip

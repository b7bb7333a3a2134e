"""The subconscious (seed 001): upkeep a daemon does in the background (subconscious/worker.py).

This module itself stays import-light: the CLI's and the MCP replies' words read it.
"""


def pending_note(waiting: int) -> str:
    """What a recall says of its realm's memories stored moments ago that have no vector yet
    (subconscious/embedding.py)."""
    if waiting == 1:
        return "1 memory stored moments ago is found by its words only until it is embedded"
    return f"{waiting} memories stored moments ago are found by their words only until embedded"

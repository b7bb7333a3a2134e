"""The subconscious (seed 001): upkeep a daemon does in the background (subconscious/worker.py)."""

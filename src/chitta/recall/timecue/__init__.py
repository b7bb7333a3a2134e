"""The time cue (seed 002 §2): reading a caller's "when" (cue.py), the cue arm that searches
its period (arm.py), the move and the seats (move.py), and what they do to a finished recall
(apply.py)."""

"""What a recall's answer is worth, judged after the ranking: does the store know anything
about the question (calibration.py, fitted on golden.py's data), which rows are shown given
that (gate.py, the admission gate), and which parts of the question the returned rows hold
(coverage.py, the trace's coverage ledger). Nothing here changes the ranking."""

"""Recall: lanes find candidates, fusion merges their rankings, the result names who found what."""

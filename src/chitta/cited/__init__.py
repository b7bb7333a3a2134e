"""Cited recall with abstention (seed 003): one synthesised, cited answer from several memory
sources, or an honest "no answer" that still shows what was found. See docs/cited-recall.md."""

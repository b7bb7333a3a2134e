"""Distillation (seed 001's distiller; issue 22): turning an agent's turns into curated
memories. rules.py picks the sentences that state a correction, a preference, a decision or
a failure and its fix, without a model; secrets.py keeps credentials out of all of it."""

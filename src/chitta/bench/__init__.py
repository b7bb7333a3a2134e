"""Benchmarks run from the command line: ``chitta bench locomo``, ``scale``, ``compare``.

Benchmarks measure and write results files; tests prove behaviour (DESIGN.md §6).
"""

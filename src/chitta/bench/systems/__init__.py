"""The retrieval systems a benchmark compares, behind one small interface (:class:`System`)."""

from chitta.bench.systems.base import System

__all__ = ["System"]

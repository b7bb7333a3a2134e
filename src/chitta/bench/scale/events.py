"""The worker's events: progress and the result, one JSON object a line, on its own pipe."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO, Any


@dataclass
class Events:
    """Progress and the result, one JSON object a line, on the worker's own pipe."""

    out: IO[str]

    def emit(self, **event: Any) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    def task(self, description: str, total: int) -> None:
        self.emit(event="task", description=description, total=total)

    def advance(self, by: int) -> None:
        self.emit(event="advance", by=by)

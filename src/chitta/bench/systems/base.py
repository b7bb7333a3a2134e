"""What every benchmarked system implements."""

from __future__ import annotations

from typing import Protocol

from chitta.bench.locomo import Conversation


class System(Protocol):
    """A retriever fed a conversation's turns and asked for ranked turn ids."""

    name: str

    def setup(self) -> None:
        """Prepare (start processes, open stores); raise a ChittaError saying what failed."""

    def load(self, realm: str, conversation: Conversation) -> None:
        """Store every turn of ``conversation``, isolated under ``realm``."""

    def search(self, realm: str, query: str, k: int, now_ms: int | None = None) -> list[str]:
        """The ``k`` best turn ids (``dia_id``) for ``query`` in ``realm``, best first, asked
        at ``now_ms`` (the question's date, ms since the epoch; None: the real clock). A
        system without a notion of now ignores it, and says so."""

    def close(self) -> None: ...

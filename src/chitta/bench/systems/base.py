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

    def search(self, realm: str, query: str, k: int) -> list[str]:
        """The ``k`` best turn ids (``dia_id``) for ``query`` in ``realm``, best first."""

    def close(self) -> None: ...

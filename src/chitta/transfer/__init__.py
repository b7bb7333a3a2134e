"""JSONL export and import that round-trip every field of memories, episodes, triplets
and entity aliases.

The format (``docs/jsonl.md``): one JSON object per line, each with a ``type``. A header line
(``chitta-export``) comes first, then episodes, memories, triplets, aliases. Times are ISO
8601 UTC with milliseconds, which is exact for chitta's millisecond clock. A memory's vector
is included only on request, as base64 float32 with the model that made it.

Import never stops at a bad line: it is reported by number and skipped, and the good lines
still land. Memories are written in batches, each one transaction.
"""

from chitta.transfer.codec import FORMAT, FORMAT_VERSION, memory_to_dict
from chitta.transfer.export import export_jsonl
from chitta.transfer.importer import ImportReport, import_jsonl

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ImportReport",
    "export_jsonl",
    "import_jsonl",
    "memory_to_dict",
]

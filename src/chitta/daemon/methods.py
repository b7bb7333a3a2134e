"""The daemon's JSON-RPC methods: one per operation (chitta/ops), over one open store.

A method takes the operation's named parameters, checked by its description (an unknown or
mistyped one is an error naming it), and returns the operation's reply with ``"ok": true``.
Chitta's own errors pass through as they are; the server turns them into JSON-RPC errors
carrying their code. Operations that write run one at a time (``writes``); long ones
(``long``) are not cut by the request deadline and may report progress.
"""

from __future__ import annotations

from chitta.ops import OPERATIONS, check_params
from chitta.ops.spec import Operation

#: The JSON-RPC methods: every operation, by name.
METHODS = OPERATIONS
#: The request member that carries what is not a parameter (``{"progress": true}``),
#: as MCP's ``_meta`` does.
META = "_meta"

__all__ = ["META", "METHODS", "Operation", "check_params"]

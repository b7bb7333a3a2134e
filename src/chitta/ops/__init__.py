"""Every operation chitta offers, each described once (ops/spec.py).

The daemon serves each as a JSON-RPC method of the same name, the MCP server offers those with
an MCP description as tools, and the CLI builds its commands from the same descriptions. A
new operation is its description and its implementation: nothing else needs to change.
"""

from __future__ import annotations

from collections.abc import Mapping

from chitta.ops import (
    admin,
    calibrate,
    cited,
    code,
    hygiene,
    learn,
    memory,
    migrate,
    relations,
    session,
)  # fmt: skip
from chitta.ops.spec import Context, Operation, Param, Params, check_params, given

OPERATIONS: Mapping[str, Operation] = {
    op.name: op
    for module in (
        memory,
        relations,
        cited,
        admin,
        migrate,
        calibrate,
        session,
        code,
        hygiene,
        learn,
    )
    for op in module.OPERATIONS
}

__all__ = ["OPERATIONS", "Context", "Operation", "Param", "Params", "check_params", "given"]

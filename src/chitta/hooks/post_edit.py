"""``chitta hook post-edit`` (PostToolUse, matcher ``Edit|Write|MultiEdit``): the file the
tool just changed re-indexed by the daemon, so the symbols an agent asks for next are the
ones on disk.

The event's ``tool_input.file_path`` (else ``tool_response.filePath``; relative to the
event's ``cwd`` if it is not absolute) goes to the daemon's ``code_reindex``, which leaves a
file alone unless it lies in a repository indexed in the realm. The hook waits for the answer
for at most :data:`WAIT_S` (and never past CHITTA_HOOK_BUDGET_MS). When no daemon answers,
or its answer is late, the request goes into the spool (chitta/spool.py), which the next
daemon takes in (the prompt and Stop hooks start one); nothing is started or waited for
here. A late request may be done twice: a re-index is idempotent (content hashes).

Nothing on stdout, ever: a PostToolUse hook's output is not what the model needs after
every edit. A failure is one ``[chitta] post-edit:`` line on stderr, which Claude Code does
not give the model (the hook exits 0).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from chitta import spool
from chitta.daemon import protocol
from chitta.daemon.client import DaemonClient, DaemonError
from chitta.errors import DaemonUnavailable
from chitta.hooks.render import clip
from chitta.hooks.run import HookRun, note

#: The longest the hook waits for the daemon's answer, in seconds: an edit is followed by
#: the agent's next step, which this must not hold up (a one-file re-index takes well under).
WAIT_S = 1.0


def edited_file(event: dict) -> str | None:
    """The absolute path of the file the tool changed, or None when the event names none."""
    given = event.get("tool_input")
    path = given.get("file_path") if isinstance(given, dict) else None
    if not isinstance(path, str) or not path:
        answer = event.get("tool_response")
        path = answer.get("filePath") if isinstance(answer, dict) else None
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    cwd = event.get("cwd")
    if not os.path.isabs(path) and isinstance(cwd, str) and os.path.isabs(cwd):
        path = os.path.join(cwd, path)
    return os.path.abspath(path) if os.path.isabs(path) else None


def _spool(run: HookRun, params: dict) -> None:
    if run.settings is not None:
        spool.append(run.settings.spool_path, "code_reindex", params)


def post_edit_hook(run: HookRun) -> str:
    """Ask the daemon to re-index the edited file (see the module docstring); prints nothing."""
    path = edited_file(dict(run.event))
    if path is None:
        return ""  # a tool this hook does not follow, or no file: nothing to do
    params = {"paths": [path], "realm": run.realm}
    wait = min(WAIT_S, run.deadline - time.monotonic())
    if wait <= 0:
        _spool(run, params)
        return ""
    try:
        client = DaemonClient(run.socket, timeout_s=wait)
    except DaemonUnavailable:
        _spool(run, params)
        return ""
    with client:
        try:
            client.call("code_reindex", **params)
        except DaemonError as exc:
            if exc.rpc_code != protocol.TIMEOUT:
                note("post-edit", f"{Path(path).name} not re-indexed: {clip(str(exc), 200)}")
        except (DaemonUnavailable, OSError, ValueError):
            # Not answered within the wait: it may still be done (the daemon finishes a write
            # it started), and a re-index is idempotent, so the spool keeps it for certain.
            _spool(run, params)
    return ""

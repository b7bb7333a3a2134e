"""Claude Code hooks: ``chitta hook prompt|session-start|stop`` and ``chitta hooks install``.

The hook client is light on purpose (stdlib + the daemon client): it must not import numpy,
onnxruntime or the store, because it starts a fresh process on every prompt.
"""

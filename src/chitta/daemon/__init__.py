"""The daemon: one process that owns a store and serves JSON-RPC on a Unix socket."""

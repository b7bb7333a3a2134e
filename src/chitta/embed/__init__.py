"""Text embedding: the local ONNX MiniLM, remote HTTP backends, a cache and a breaker."""

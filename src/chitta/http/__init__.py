"""The daemon's HTTP face (issue 23; docs/http.md): a REST API and MCP over HTTP generated from
the operations' descriptions, and the memory browser. Off unless `chitta serve --http`; never
on the hooks' import path (it imports starlette and uvicorn)."""

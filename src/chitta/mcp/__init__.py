"""The MCP server (`chitta mcp`): chitta's operations as MCP tools over stdio."""

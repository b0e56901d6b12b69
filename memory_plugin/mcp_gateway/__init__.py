"""The MCP gateway: the memory tools, resources and prompt over the Model Context Protocol.

`memory-plugin mcp` serves them with the official MCP SDK (the `mcp` extra) over stdio or
streamable HTTP, so any MCP client shares the memory, scopes and screen of the LangGraph
agents (docs/mcp.md). Modules: `identity` (who a session is: the command line's user or a
bearer token's, and the anonymous rule), `tools` (the kinds' tools, gated as in the graph;
never the journal tools), `resources` (the signed-in user's memory, read-only, and the
memory prompt), `server` (the FastMCP server and its transports). Nothing here is imported
by `memory_plugin` itself: the SDK loads only when the gateway runs.
"""

"""The `mcp` command of `memory-plugin` (memory_plugin.cli): serve the memory gateway over
stdio (one local user, like `chat`) or, with `--http`, over streamable HTTP with the console's
bearer tokens. The MCP SDK is imported only when the command runs."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from memory_plugin.errors import MemoryPluginError

EXTRA = "the mcp command needs the mcp extra ({name} is missing): pip install -e '.[mcp]'"


def add_mcp_command(commands: Any) -> None:
    """Add `mcp` to the subcommands of the `memory-plugin` parser."""
    mcp = commands.add_parser(
        "mcp",
        help="serve the memory tools to MCP clients (stdio; --http for streamable HTTP)",
        description="Serve memory over the Model Context Protocol (docs/mcp.md). Over stdio "
        "the session is --user's (none: an anonymous session, whose private agent entries are "
        "stored shared and which has no scoped or bounded memory); over --http each request "
        "is its bearer token's user and a request without a valid token answers 401.",
    )
    mcp.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    mcp.add_argument("--user", help="stdio: whose memory it is (default: anonymous)")
    mcp.add_argument(
        "--workspace", help="stdio: the workspace (default: none, the user's personal memory)"
    )
    mcp.add_argument("--org", help="stdio: the user's organisation")
    mcp.add_argument("--agent", help="stdio: the agent (default: default)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    mcp.add_argument("--host", default="127.0.0.1", help="--http: address (127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8766, help="--http: port (8766)")
    mcp.add_argument(
        "--tokens", help="--http: the console's JSON token file (default: $MEMORY_AUTH_TOKENS)"
    )
    mcp.add_argument(
        "--screen",
        metavar="MODULE:FUNCTION",
        help="an extra safety check every memory write runs after the built-in rules: "
        "check(text, visibility) returns a reason to refuse, or None (see docs/safety.md)",
    )
    mcp.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Run the gateway until its client (stdio) or the operator (HTTP) stops it."""
    try:
        from memory_plugin.mcp_gateway import server
    except ImportError as exc:
        raise MemoryPluginError(EXTRA.format(name=exc.name)) from exc
    from memory_plugin.scope.doors import door_context, workspace_words
    from memory_plugin.server.tokens import TOKENS_ENV, load_tokens

    if args.http:
        if args.user:
            raise MemoryPluginError("--user is for stdio: over --http the token names the user")
        if not (args.tokens or os.environ.get(TOKENS_ENV)):
            raise MemoryPluginError(f"--http needs --tokens or ${TOKENS_ENV} (a JSON token file)")
        tokens = load_tokens(args.tokens)
        print(
            f"memory-plugin mcp: serving http://{args.host}:{args.port}/mcp; each request is "
            f"its token's user, in the workspace the token pins (workspace_id), else in "
            f"{workspace_words(None)}",
            file=sys.stderr,
        )
        serving = server.serve_http(
            args.url, tokens, host=args.host, port=args.port, screen=args.screen
        )
        asyncio.run(serving)
        return 0
    ctx = door_context(
        args.user,
        org=args.org,
        workspace=args.workspace if args.user else None,
        agent=args.agent,
    )
    if ctx.user_id:
        print(
            f"memory-plugin mcp: serving {ctx.user_id}'s memory in "
            f"{workspace_words(ctx.workspace_id)}, agent {ctx.agent_id}, on stdio",
            file=sys.stderr,
        )
    asyncio.run(server.serve_stdio(args.url, ctx, screen=args.screen, log=sys.stderr))
    return 0

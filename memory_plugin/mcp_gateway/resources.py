"""The signed-in user's memory as read-only MCP resources (the curated document, the profile,
the bounded targets), and the `memory` prompt: the same memory blocks the graph puts in front
of its model, so a client without the graph can start a conversation with memory in it."""

from __future__ import annotations

from langgraph.store.base import BaseStore
from mcp.server.fastmcp import FastMCP

from memory_plugin.blocks import PromptBlock, render_blocks
from memory_plugin.bounded import BoundedMemory
from memory_plugin.bounded.blocks import block_text
from memory_plugin.mcp_gateway.identity import Identity
from memory_plugin.plans import arun
from memory_plugin.prebuilt.services import MemoryServices
from memory_plugin.profile.document import render
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped import ScopedMemory

DOCUMENT = "memory://document"
PROFILE = "memory://profile"
BOUNDED = "memory://bounded"
NOTHING = "(nothing yet)"


def add_resources(
    server: FastMCP, services: MemoryServices, store: BaseStore, identity: Identity
) -> None:
    """The resources of the kinds built in `services`, each read for `identity()`."""
    scoped = services.of(ScopedMemory)
    profile = services.of(ProfileMemory)
    bounded = services.of(BoundedMemory)
    if scoped is not None:

        @server.resource(DOCUMENT, name="document", mime_type="text/markdown")
        async def document() -> str:
            """The curated memory document of your scope."""
            found = await scoped.aread_document(identity())
            return found.text if found is not None and found.text else NOTHING

    if profile is not None:

        @server.resource(PROFILE, name="profile", mime_type="text/markdown")
        async def profile_text() -> str:
            """What I know about you: your profile."""
            ctx = identity()
            found = await profile.aread(ctx) if ctx.user_id else None
            return render(found) if found is not None else NOTHING

    if bounded is not None:

        @server.resource(BOUNDED, name="bounded", mime_type="text/plain")
        async def targets() -> str:
            """The bounded memory's two targets (`memory`, `user`) with their usage."""
            ctx = identity()
            return block_text(await bounded.aread(ctx)) if ctx.user_id else NOTHING

    @server.prompt(name="memory", description="Your memory, as the agent's system prompt has it.")
    async def memory_prompt() -> str:
        """The memory blocks the graph's system prompt holds for you, in the graph's order."""
        ctx = identity()
        blocks: list[PromptBlock] = []
        for service in services.services.values():
            plan = getattr(service, "blocks_plan", None)
            if plan is not None:
                blocks += await arun(store, plan(ctx))
        return render_blocks(blocks) or NOTHING

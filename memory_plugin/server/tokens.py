"""Bearer tokens for the REST app: who a token is, from a JSON token table.

The table maps each token to a user, in graphs/auth.py's $MEMORY_AUTH_TOKENS format:

    {"<token>": {"identity": "ann", "agent_id": "helper", "workspace_id": "acme"}, ...}

`identity` is required; `agent_id`, `workspace_id` and `org_id` are optional. The user and
agent of every request come from here, never from the request body.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memory_plugin.context import MemoryContext
from memory_plugin.errors import MemoryPluginError

TOKENS_ENV = "MEMORY_AUTH_TOKENS"
TokenTable = Mapping[str, MemoryContext]


def load_tokens(
    tokens: Mapping[str, Mapping[str, Any]] | str | os.PathLike[str] | None,
) -> TokenTable:
    """The token table: a mapping, a JSON file, or the file named by $MEMORY_AUTH_TOKENS."""
    if tokens is None:
        path = os.environ.get(TOKENS_ENV)
        if not path:
            raise MemoryPluginError(
                f"no tokens: pass create_app(tokens=...) or set {TOKENS_ENV} to a JSON token file"
            )
        tokens = path
    if isinstance(tokens, str | os.PathLike):
        source = Path(tokens)
        try:
            tokens = json.loads(source.read_text())
        except (OSError, ValueError) as exc:
            raise MemoryPluginError(f"token file {source} cannot be read as JSON: {exc}") from exc
    if not isinstance(tokens, Mapping):
        raise MemoryPluginError("the token table must map tokens to users")
    return {str(token): caller(user) for token, user in tokens.items() if token}


def caller(user: Any) -> MemoryContext:
    """The memory context of one token's user: its identity, agent, workspace and org."""
    if not isinstance(user, Mapping) or not isinstance(user.get("identity"), str):
        raise MemoryPluginError("every token must map to a user with an 'identity' string")
    return MemoryContext(
        user_id=user["identity"],
        agent_id=user.get("agent_id"),
        workspace_id=user.get("workspace_id"),
        org_id=user.get("org_id"),
    )


def bearer(authorization: str | None, table: TokenTable) -> MemoryContext | None:
    """The caller of an `Authorization: Bearer <token>` header, None when missing or unknown."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return table.get(token.strip())

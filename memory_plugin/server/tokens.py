"""Bearer tokens for the console: who a token is, from a JSON token table.

The table maps each token to a user, in graphs/auth.py's $MEMORY_AUTH_TOKENS format, extended
(older files keep working):

    {"<token>": {"identity": "ann", "org_id": "o1", "workspaces": ["acme"],
                 "workspace_id": "acme", "agent_id": "helper", "spaces": ["s1"],
                 "admin": ["platform", "org", "space:s1"]}}

`identity` is required; everything else is optional. The user, their workspaces and roles
come from here (or from the app's `authenticate` hook), never from a request.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memory_plugin.errors import MemoryPluginError

TOKENS_ENV = "MEMORY_AUTH_TOKENS"
Authenticate = Callable[[str], Mapping[str, Any] | None]
"""token -> the user mapping (the token table's shape), None for an unknown token."""


def load_tokens(
    tokens: Mapping[str, Mapping[str, Any]] | str | os.PathLike[str] | None,
) -> dict[str, Mapping[str, Any]]:
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
    for user in tokens.values():
        if not isinstance(user, Mapping) or not isinstance(user.get("identity"), str):
            raise MemoryPluginError("every token must map to a user with an 'identity' string")
    return {str(token): user for token, user in tokens.items() if token}


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, None when missing or not bearer."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()

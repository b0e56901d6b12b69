"""An offline placeholder embedding: hashed character trigrams.

Deterministic, dependency-free and offline, for demos, tests and `langgraph dev` with no
network. It is not a semantic embedding (words sharing a stem land close together, nothing
more): real deployments pass LangChain Embeddings, for example
`init_embeddings("openai:text-embedding-3-small")` with `dims=1536`, or the offline
all-MiniLM-L6-v2 of the `local` extra (memory_plugin.offline.local_embeddings).
"""

from __future__ import annotations

import hashlib
import math
import re

DIMS = 384


def hashed_trigrams(texts: list[str], dims: int = DIMS) -> list[list[float]]:
    """Embed each text as a normalised vector of hashed character-trigram counts."""
    vectors = []
    for text in texts:
        vec = [0.0] * dims
        for word in re.findall(r"\w+", text.lower()):
            padded = f" {word} "
            for i in range(len(padded) - 2):
                digest = hashlib.blake2b(padded[i : i + 3].encode(), digest_size=8).digest()
                vec[int.from_bytes(digest, "big") % dims] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        vectors.append([v / norm for v in vec])
    return vectors

"""A small deterministic embedding function for index tests: hashed bag of words."""

from __future__ import annotations

import hashlib
import math
import re

DIMS = 64


def embed_texts(texts: list[str]) -> list[list[float]]:
    """Embed each text as a normalised vector of hashed word counts."""
    vectors = []
    for text in texts:
        vec = [0.0] * DIMS
        for word in re.findall(r"\w+", text.lower()):
            bucket = int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIMS
            vec[bucket] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        vectors.append([v / norm for v in vec])
    return vectors


INDEX = {"dims": DIMS, "embed": embed_texts, "fields": ["text"]}

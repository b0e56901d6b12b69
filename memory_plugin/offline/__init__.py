"""Memory with no key and no network: the built-in offline chat model (`model`, reading plain
text in `text`, answering memory's own prompts in `upkeep`), the model used where none is
given (`default`: the environment's, else the offline one), the scripted demo model (`demo`),
the example chatbot (`chat`, `cancellable`) and offline embeddings (`embeddings`,
`local_embeddings`). `import memory_plugin` loads none of it."""

from memory_plugin.offline.model import OfflineModel

__all__ = ["OfflineModel"]

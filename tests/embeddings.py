"""The index configuration the tests use: the library's offline trigram embedding, so words
sharing a stem ("tax", "taxes") land close together while keyword search misses them."""

from memory_plugin.offline.embeddings import DIMS, hashed_trigrams

embed_texts = hashed_trigrams
INDEX = {"dims": DIMS, "embed": embed_texts, "fields": ["text"]}

"""Thread memory: journal, masking, compaction, recent window."""

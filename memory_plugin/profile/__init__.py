"""User profile memory: one memory.md per user, injected as "What I know about you" and
consolidated after each turn."""

"""A user's memory is theirs: find and forget a fact everywhere it is kept (`forget`), take
the memory out and bring it back (export and import), delete a user."""

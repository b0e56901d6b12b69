"""A user's memory is theirs: every item of it across kinds (`inventory`), finding and
forgetting a fact everywhere it is kept (`forget`), taking the memory out and bringing it
back (`archive`, with a readable Markdown form in `readable`), and deleting a user (`erase`);
the CLI commands over them are in `commands` and `forget_command`."""

from memory_plugin.privacy.archive import Archive, ArchiveError, ImportReport, parse
from memory_plugin.privacy.erase import Erased, aerase_user, erase_user
from memory_plugin.privacy.forget import Forgetter, Place, Preview
from memory_plugin.privacy.inventory import Owner, UnknownUserError

__all__ = [
    "Archive",
    "ArchiveError",
    "Erased",
    "Forgetter",
    "ImportReport",
    "Owner",
    "Place",
    "Preview",
    "UnknownUserError",
    "aerase_user",
    "erase_user",
    "parse",
]

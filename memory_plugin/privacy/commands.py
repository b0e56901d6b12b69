"""The `export`, `import` and `delete-user` commands of `memory-plugin` (memory_plugin.cli)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memory_plugin.errors import MemoryPluginError

URL_HELP = "backend URL (default: $MEMORY_URL or ./.memory/memory.db)"


def _owner(args: argparse.Namespace) -> Any:
    from memory_plugin.privacy.inventory import Owner

    return Owner(args.user, args.org)


def semantic(store: Any) -> bool:
    """Whether the store keeps a vector index (as the memory kinds decide it)."""
    return getattr(store, "index_config", True) is not None


def _export(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.plans import run
    from memory_plugin.privacy.archive import export_plan, require_plan
    from memory_plugin.privacy.readable import to_markdown

    owner = _owner(args)
    with connect(args.url) as backend:
        run(backend.store, require_plan(owner))
        archive = run(backend.store, export_plan(owner, args.workspace or ()))
    sys.stdout.write(to_markdown(archive) if args.format == "markdown" else archive.dumps())
    return 0


def _import(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.plans import run
    from memory_plugin.privacy.archive import import_plan, parse

    try:
        with open(args.file, "rb") as file:
            text = file.read()
    except OSError as exc:
        raise MemoryPluginError(f"import: cannot read {args.file}: {exc}") from exc
    archive = parse(text)
    with connect(args.url) as backend:
        plan = import_plan(
            archive,
            merge=args.merge,
            semantic=semantic(backend.store),
            include_forgotten=args.include_forgotten,
        )
        report = run(backend.store, plan)
    print(report.summary())
    return 0


def _delete_user(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.privacy.erase import erase_user

    with connect(args.url) as backend:
        checkpointer = backend.checkpointer if args.threads else None
        erased = erase_user(backend.store, _owner(args), checkpointer=checkpointer)
    print(erased.summary())
    return 0


def add_commands(commands: Any) -> None:
    """Add export, import and delete-user to the command line's subparsers."""
    export = commands.add_parser(
        "export",
        help="write everything one user's memory holds as JSON (or Markdown) to standard output",
    )
    export.add_argument("--user", required=True, help="the user whose memory it is")
    export.add_argument("--org", help="the user's org, when their memory is an org's")
    export.add_argument(
        "--workspace",
        action="append",
        help="also the user's personal memory inside this workspace (repeatable)",
    )
    export.add_argument(
        "--format",
        choices=["json", "markdown"],
        default="json",
        help="json (the document import reads; default) or markdown (a readable archive)",
    )
    export.add_argument("--url", help=URL_HELP)
    export.set_defaults(run=_export)
    load = commands.add_parser(
        "import", help="load an export into a store, checking all of it before writing any"
    )
    load.add_argument("file", help="the JSON file `memory-plugin export` wrote")
    load.add_argument(
        "--merge",
        action="store_true",
        help="add to a user who already has memory: only what is missing, never a duplicate",
    )
    load.add_argument(
        "--include-forgotten",
        action="store_true",
        help="with --merge, also bring back what was forgotten or deleted here since the export",
    )
    load.add_argument("--url", help=URL_HELP)
    load.set_defaults(run=_import)
    delete = commands.add_parser(
        "delete-user",
        help="delete every memory of a user on every kind, and their settings layer",
    )
    delete.add_argument("user", help="the user to delete")
    delete.add_argument("--org", help="the user's org, when their memory is an org's")
    delete.add_argument(
        "--threads",
        action="store_true",
        help="also delete the threads they own, with their journals and summaries",
    )
    delete.add_argument("--url", help=URL_HELP)
    delete.set_defaults(run=_delete_user)

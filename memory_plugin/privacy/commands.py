"""The `export`, `import` and `delete-user` commands of `memory-plugin` (memory_plugin.cli)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memory_plugin.errors import MemoryPluginError
from memory_plugin.scope.identity import PERSONAL

if TYPE_CHECKING:
    from memory_plugin.privacy.archive import Archive
    from memory_plugin.privacy.inventory import Owner
    from memory_plugin.privacy.progress import Progress

URL_HELP = "backend URL (default: $MEMORY_URL or ./.memory/memory.db)"


def owner_of(user: str, org: str | None, workspaces: Sequence[str] = ()) -> Owner:
    """Whose memory a privacy command reaches, resolved as every door resolves its user
    (memory_plugin.scope.doors), with the workspaces it names (`personal` names none)."""
    from memory_plugin.privacy.inventory import Owner
    from memory_plugin.scope.doors import door_context

    ctx = door_context(user, org=org)
    named = (door_context(user, org=org, workspace=w).workspace_id for w in workspaces)
    return Owner(str(ctx.user_id), ctx.org_id, tuple(dict.fromkeys(w for w in named if w)))


@contextmanager
def progress_bar(what: str) -> Iterator[Progress]:
    """A Progress shown as a bar on standard error while the work runs, when standard error is
    a terminal (nothing in a pipe); each step's end is shown, and the bar is cleared after."""
    from tqdm import tqdm

    with tqdm(desc=what, unit="", file=sys.stderr, disable=None, leave=False) as bar:
        steps: list[str] = []

        def show(step: str, done: int, total: int | None) -> None:
            if steps[-1:] != [step]:
                if steps:
                    bar.refresh()
                steps.append(step)
                bar.set_description_str(f"{what}: {step}", refresh=False)
                bar.reset(total=total)
            bar.update(done - bar.n)
            if done == total:
                bar.refresh()

        yield show


def semantic(store: Any) -> bool:
    """Whether the store keeps a vector index (as the memory kinds decide it)."""
    return getattr(store, "index_config", True) is not None


def _export(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.plans import run
    from memory_plugin.privacy.archive import export_plan, require_plan
    from memory_plugin.privacy.inventory import workspaces_plan
    from memory_plugin.privacy.readable import to_markdown

    owner = owner_of(args.user, args.org, args.workspace or ())
    with connect(args.url) as backend, progress_bar(f"export {args.user}") as progress:
        workspaces = list(owner.workspaces) or run(backend.store, workspaces_plan(owner))
        archive = run(backend.store, export_plan(owner, workspaces, progress))
        if not archive.items:
            run(backend.store, require_plan(owner))

    sys.stdout.write(to_markdown(archive) if args.format == "markdown" else archive.dumps())
    sys.stdout.flush()
    print(_exported(archive), file=sys.stderr)
    return 0


def _exported(archive: Archive) -> str:
    """What an export wrote: how many items of whom, from which personal memory."""
    inside = ", ".join(archive.workspaces)
    where = f"no workspace ({PERSONAL})" + (f" and workspaces {inside}" if inside else "")
    return (
        f"Exported {archive.owner.describe()}: personal memory in {where}; "
        f"{len(archive.items):,} items."
    )


def _import(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.plans import run
    from memory_plugin.privacy.archive import import_plan, parse

    try:
        with open(args.file, "rb") as file:
            text = file.read()
    except OSError as exc:
        raise MemoryPluginError(f"import: cannot read {args.file}: {exc}") from exc
    with progress_bar(f"import {args.file}") as progress:
        archive = parse(text, progress)
        with connect(args.url) as backend:
            plan = import_plan(
                archive,
                merge=args.merge,
                semantic=semantic(backend.store),
                include_forgotten=args.include_forgotten,
                progress=progress,
            )
            report = run(backend.store, plan)
    print(report.summary())
    return 0


def _delete_user(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.privacy.erase import erase_user

    with connect(args.url) as backend, progress_bar(f"delete-user {args.user}") as progress:
        checkpointer = backend.checkpointer if args.threads else None
        owner = owner_of(args.user, args.org)
        erased = erase_user(backend.store, owner, checkpointer=checkpointer, progress=progress)

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
        help="only the user's personal memory inside this workspace, besides outside "
        "workspaces (repeatable; default: every workspace holding some)",
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

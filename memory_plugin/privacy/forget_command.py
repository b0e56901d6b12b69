"""The `forget` command of `memory-plugin` (memory_plugin.cli): find a fact everywhere a
user's memory keeps it, list the places, and forget them once confirmed on standard input
(`--yes`: without asking). Threads whose journal mentions the fact are listed; they are
conversation history, not memory, and are deleted only with `--threads`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from memory_plugin.errors import MemoryPluginError

THREADS_NOTE = (
    "Thread journals are conversation history, not memory: they are kept; "
    "pass --threads to delete these threads too."
)


def add_forget_command(commands: Any) -> None:
    """Add `forget` to the subcommands of the `memory-plugin` parser."""
    forget = commands.add_parser(
        "forget",
        help="find a fact everywhere a user's memory keeps it, and forget it",
        description="List every place the user's memory holds TEXT (words, and meaning where "
        "the store has a vector index) and, once you confirm, remove each one.",
    )
    forget.add_argument("text", help="the fact or the word to forget, e.g. a name")
    forget.add_argument("--user", required=True, help="the user whose memory it is")
    forget.add_argument("--org", help="the user's organisation, when memory is kept per org")
    forget.add_argument(
        "--workspace",
        action="append",
        default=[],
        help="a workspace the user belongs to: its team memory is searched too (repeatable; "
        "personal memory is searched in every workspace that holds some)",
    )
    forget.add_argument(
        "--yes",
        action="store_true",
        help="forget every place found by words without asking (candidates found by "
        "meaning are confirmed only when asked)",
    )
    forget.add_argument(
        "--threads",
        action="store_true",
        help="also delete the threads whose journal mentions the fact (checkpoints and journal)",
    )
    forget.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    forget.set_defaults(run=run_forget)


def _origin(place: Any) -> str:
    made = place.provenance
    if made is None:
        return "origin unknown"
    parts = [made.source]
    parts += [f"{name} {value}" for name in ("tool", "job") if (value := getattr(made, name))]
    if made.thread_id:
        parts.append(f"thread {made.thread_id}")
    if made.actor:
        parts.append(f"by {made.actor}")
    return f"{', '.join(parts)}, {made.at[:19].replace('T', ' ')}"


def _line(number: int, place: Any) -> str:
    text = place.text if len(place.text) <= 100 else place.text[:99] + "…"
    line = f'{number:3}. {place.label}\n     "{text}"  ({_origin(place)})'
    if not place.editable:
        line += f"\n     not yours to change: {place.reason}"
    elif place.match == "meaning":
        line += "\n     found by meaning, not by words: confirm it to forget it"
    return line


def _ask(question: str) -> bool:
    print(f"{question} [y/N] ", end="", flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def run_forget(args: argparse.Namespace) -> int:
    """`memory-plugin forget`."""
    from memory_plugin.connection import connect
    from memory_plugin.context_management.journal import delete_thread
    from memory_plugin.context_management.owners import aowned_thread_ids
    from memory_plugin.plans import run
    from memory_plugin.privacy.commands import owner_of, progress_bar
    from memory_plugin.privacy.forget import Forgetter, needle_of, threads_plan

    needle = needle_of(args.text)
    owner = owner_of(args.user, args.org, args.workspace)
    with connect(args.url) as backend:
        forgetter = Forgetter.over(backend.store)
        with progress_bar(f"forget {args.user}") as progress:
            preview = forgetter.preview(owner, needle, progress)
            threads: list[str] = []
            if backend.checkpointer is not None:
                store, checkpointer = backend.store, backend.checkpointer
                owned = asyncio.run(aowned_thread_ids(checkpointer, store, owner.key))
                threads = run(store, threads_plan(owned, needle, progress))
        places = list(preview.places)
        if not places and not threads:
            print(f'Nothing in {args.user}\'s memory mentions "{needle}".')
            return 0
        print(f'{args.user}\'s memory holds "{needle}" in {len(places)} place(s):')
        for number, place in enumerate(places, start=1):
            print(_line(number, place))
        if threads:
            print(f"Threads whose journal mentions it: {', '.join(threads)}")
            if not args.threads:
                print(THREADS_NOTE)
        words = [p for p in places if p.editable and p.match == "words"]
        candidates = [p for p in places if p.editable and p.match == "meaning"]
        doomed = threads if args.threads else []
        if args.yes:
            chosen = words
            if candidates:
                print(
                    f"{len(candidates)} place(s) found by meaning are kept: confirm them "
                    "without --yes to forget them."
                )
        else:
            chosen = []
            what = f"{len(words)} place(s)" + (f" and {len(doomed)} thread(s)" if doomed else "")
            if (words or doomed) and not _ask(f"Forget {what}?"):
                print("Nothing was changed.")
                return 1
            chosen = list(words)
            for place in candidates:
                if _ask(f'Also forget "{place.text}" ({place.label}, found by meaning)?'):
                    chosen.append(place)
        with progress_bar(f"forget {args.user}") as progress:
            done = forgetter.apply(preview, [place.id for place in chosen], progress)
        for outcome in done.outcomes:
            if not outcome.done:
                print(f"not changed: {outcome.place.label}: {outcome.detail}")
        print(done.summary())
        for thread in doomed:
            delete_thread(backend.checkpointer, backend.store, thread, keep_journal=False)
        if doomed:
            print(f"Deleted {len(doomed)} thread(s): {', '.join(doomed)}")
    if any(not outcome.done for outcome in done.outcomes):
        raise MemoryPluginError("some places could not be forgotten (see above)")
    return 0

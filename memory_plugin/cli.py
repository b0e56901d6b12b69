"""The `memory-plugin` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from memory_plugin.errors import MemoryPluginError


def chat_main(argv: Sequence[str]) -> int:
    """The chatbot, with its own options (--user, --workspace, --shared, --thread, --url)."""
    from memory_plugin.chat import main

    return main(argv)


def _consolidate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from memory_plugin.backends import connect
    from memory_plugin.models import resolve_model
    from memory_plugin.scoped.consolidation import ScopeResult, consolidate

    model = resolve_model(args.model)
    with connect(args.url) as backend:
        bar = tqdm(desc="consolidating", unit="scope", file=sys.stderr)

        def progress(result: ScopeResult) -> None:
            bar.update(1)
            bar.set_postfix(folded=result.folded, status=result.status)

        report = consolidate(backend.store, model, progress=progress)
        bar.close()
    for result in report.failed:
        print(f"failed: {'/'.join(result.namespace[1:])}: {result.error}", file=sys.stderr)
    print(report.summary())
    return 1 if report.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="memory-plugin", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    consolidate = commands.add_parser(
        "consolidate", help="fold notes older than the minimum age into each scope's document"
    )
    consolidate.add_argument(
        "--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)"
    )
    consolidate.add_argument("--model", help="chat model (default: $MEMORY_MODEL)")
    consolidate.set_defaults(run=_consolidate)
    chat = commands.add_parser("chat", help="the example chatbot (an offline demo without a model)")
    chat.add_argument("chat_args", nargs=argparse.REMAINDER)
    chat.set_defaults(run=lambda args: chat_main(args.chat_args))
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except MemoryPluginError as exc:
        print(f"memory-plugin: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

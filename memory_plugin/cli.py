"""The `memory-plugin` command."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from memory_plugin.errors import MemoryPluginError
from memory_plugin.mcp_gateway.command import add_mcp_command
from memory_plugin.privacy.commands import add_commands as add_privacy_commands
from memory_plugin.privacy.forget_command import add_forget_command

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_plugin.safety import Check
    from memory_plugin.scope.context import MemoryContext
    from memory_plugin.scoped.consolidation import ScopeResult
    from memory_plugin.scoped.documents import Document


def _chat(args: argparse.Namespace) -> int:
    from memory_plugin.offline.chat import chat

    return chat(args)


def _demo(args: argparse.Namespace) -> int:
    from memory_plugin.offline.chat import run_demo

    run_demo(args.url, sys.stdout)
    return 0


def _screening(check: Check | None, model: BaseChatModel | None) -> AbstractContextManager[Any]:
    """The staged screen for a command that writes outside a graph: the `--screen` check and
    the judge the settings ask for (asking `model`)."""
    from memory_plugin.safety import screen_from, screening
    from memory_plugin.settings import SettingsCache

    return screening(screen_from(check, SettingsCache(None).base, model))


@contextmanager
def _scopes_bar() -> Iterator[Callable[[ScopeResult], None]]:
    """A bar of the scopes consolidated, on standard error when it is a terminal (nothing in a
    pipe), cleared if the run fails; what is logged meanwhile goes on a line above it."""
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    bar = tqdm(desc="consolidating", unit="scope", file=sys.stderr, disable=None)
    with bar, logging_redirect_tqdm():

        def progress(result: ScopeResult) -> None:
            bar.update(1)
            bar.set_postfix(folded=result.folded, status=result.status)

        try:
            yield progress
        except BaseException:
            bar.leave = False
            raise


def _consolidate(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.models import resolve_model
    from memory_plugin.scoped.consolidation import check_job_lease, consolidate
    from memory_plugin.scoped.leases import Worker
    from memory_plugin.scoped.shards import worker_ids

    if args.workers != 1:
        if args.screen is not None:
            raise MemoryPluginError("--screen needs --workers 1 (worker processes run alone)")
        return _consolidate_workers(args)
    worker = Worker(worker_ids(1, args.worker_id)[0], args.lease_seconds)
    model = resolve_model(args.model)
    with connect(args.url) as backend:
        check_job_lease(backend.store, worker.lease_seconds, option="--lease-seconds")
        with _screening(args.screen, model), _scopes_bar() as progress:
            report = consolidate(backend.store, model, progress=progress, worker=worker)
    for result in report.failed:
        print(f"failed: {'/'.join(result.namespace[1:])}: {result.error}", file=sys.stderr)
    print(report.summary())
    return 1 if report.failed else 0


def _consolidate_workers(args: argparse.Namespace) -> int:
    """`consolidate --workers N`: N worker processes at once, one bar of the scopes they
    finish (on a terminal), one summary line each."""
    from memory_plugin.scoped.leases import LeaseTooShortError
    from memory_plugin.scoped.shards import run_workers

    try:
        with _scopes_bar() as progress:
            outcomes = run_workers(
                args.url,
                args.model,
                args.workers,
                worker_id=args.worker_id,
                lease_seconds=args.lease_seconds,
                progress=progress,
            )
    except LeaseTooShortError as exc:
        raise exc.named("--lease-seconds") from None
    for outcome in outcomes:
        for failure in outcome.failed:
            print(f"failed: {failure} (worker {outcome.worker})", file=sys.stderr)
        print(f"{outcome.worker}: {outcome.summary}")
    return 1 if any(outcome.failed for outcome in outcomes) else 0


_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1"}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _port(value: str) -> int:
    """A TCP port number from the command line."""
    try:
        port = int(value)
    except ValueError:
        port = 0
    if not 1 <= port <= 65_535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, got {value!r}")
    return port


def _dev_user(args: argparse.Namespace) -> dict[str, Any]:
    """The development token's user: `--user`, member of each `--workspace` (and, as the
    app checks on each request, of every workspace holding their personal memory), admin of
    every settings layer (platform, org and each `--space`)."""
    from memory_plugin.scope.namespaces import check_id

    spaces = [check_id(space, what="--space") for space in dict.fromkeys(args.space or ())]
    workspaces = dict.fromkeys(args.workspace or ())
    return {
        "identity": check_id(args.user, what="--user"),
        "workspaces": [check_id(workspace, what="--workspace") for workspace in workspaces],
        "spaces": spaces,
        "admin": ["platform", "org", *(f"space:{space}" for space in spaces)],
    }


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from memory_plugin.server import TOKENS_ENV, create_app
    except ImportError as exc:
        raise MemoryPluginError(
            f"serve needs the server extra ({exc.name} is missing): "
            "pip install -e '.[server]' in the checkout"
        ) from exc
    from memory_plugin.backends import parse_url

    token_file = args.tokens or os.environ.get(TOKENS_ENV)
    token = None if token_file else secrets.token_urlsafe(24)
    tokens: Any = token_file or {token: _dev_user(args)}
    store = parse_url(args.url).display
    app = create_app(
        url=args.url, tokens=tokens, workspaces_from_store=token is not None, screen=args.screen
    )
    host = _WILDCARDS.get(args.host, args.host)
    address = f"http://{f'[{host}]' if ':' in host else host}:{args.port}/"
    if token is not None and args.host not in _LOOPBACK:
        print(
            f"memory-plugin: the development token administers every settings layer and the "
            f"console listens on {args.host}; use --tokens for anything but a trusted network",
            file=sys.stderr,
        )
    print(f"Store: {store}")
    if token is None:
        print(f"Console: {address} (sign in with a token from {token_file})")
    else:
        print(f"Console: {address}#token={token}")
        print(f"Development token: {token}")
    sys.stdout.flush()
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _context(args: argparse.Namespace) -> MemoryContext:
    from memory_plugin.scope.doors import door_context

    return door_context(args.user, workspace=args.workspace, shared=args.shared)


def _saved_at(document: Document) -> str:
    stamp = datetime.fromisoformat(document.updated_at)
    return stamp.strftime("%Y-%m-%d %H:%M:%S UTC")


def _history(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.scoped import ScopedMemory

    with connect(args.url) as backend:
        versions = ScopedMemory(backend.store).history(_context(args))
    if not versions:
        print("No memory document in this scope yet.")
        return 0
    for n, document in enumerate(versions):
        current = "  (current)" if n == 0 else ""
        size = f"{len(document.text):,} characters"
        print(f"version {document.version}  {_saved_at(document)}  {size}{current}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.models import MODEL_ENV, resolve_model
    from memory_plugin.scoped import ScopedMemory

    model = resolve_model(args.model) if args.model or os.environ.get(MODEL_ENV) else None
    with connect(args.url) as backend, _screening(args.screen, model):
        write = ScopedMemory(backend.store, model=model).restore(_context(args), args.version)
    document = write.document
    text = (
        f"Restored version {args.version} as version {document.version} "
        f"({len(document.text):,} characters)."
    )
    if write.compressed:
        text += " It was over the hard limit, so it was compressed before saving."
    print(text)
    return 0


def _recall_audit(args: argparse.Namespace) -> int:
    from memory_plugin.connection import connect
    from memory_plugin.offline.local_embeddings import default_index
    from memory_plugin.scoped.audit import recall_audit

    if (args.user is None) == (args.sample is None):
        raise MemoryPluginError("recall-audit: give --user (one scope) or --sample N, not both")
    queries = None
    if args.queries:
        try:
            with open(args.queries, encoding="utf-8") as lines:
                queries = [line.strip() for line in lines if line.strip()]
        except OSError as exc:
            raise MemoryPluginError(f"recall-audit: cannot read {args.queries}: {exc}") from exc
    ctx = _context(args) if args.user is not None else None
    index = None if args.keyword_only else default_index()
    with connect(args.url, index=index) as backend:
        report = recall_audit(
            backend.store,
            ctx,
            queries=queries,
            sample=args.sample,
            per_scope=args.per_scope,
            seed=args.seed,
            candidates=args.candidates,
        )
    print(report.to_json() if args.json else report.table())
    return 0


def load_check(spec: str) -> Any:
    """The safety check `--screen module:function` names (imported from the current
    directory too); a spec that does not name a callable is a MemoryPluginError."""
    import importlib

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise MemoryPluginError(f"--screen {spec!r}: expected module:function")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise MemoryPluginError(f"--screen {spec!r}: cannot load it ({exc})") from exc
    if not callable(found):
        raise MemoryPluginError(
            f"--screen {spec!r}: {type(found).__name__} is not a callable check(text, visibility)"
        )
    return found


def _screen_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--screen",
        metavar="MODULE:FUNCTION",
        help="an extra safety check every memory write runs after the built-in rules: "
        "check(text, visibility) returns a reason to refuse, or None (see docs/safety.md)",
    )


def _scope_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    command.add_argument("--user", required=True, help="the user whose memory it is")
    command.add_argument("--workspace", help="the workspace (required with --shared)")
    command.add_argument(
        "--shared", action="store_true", help="the workspace's team memory, not the user's"
    )


def _chat_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--user", default=os.environ.get("USER") or "me", help="who is chatting (default: $USER)"
    )
    parser.add_argument(
        "--workspace", help="the workspace (default: none, the user's personal memory)"
    )
    parser.add_argument(
        "--shared", action="store_true", help="a shared (team) thread of the workspace"
    )
    parser.add_argument(
        "--thread", default="main", help="the thread to open or resume (default: main)"
    )
    parser.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    parser.add_argument(
        "--model",
        help="chat model, e.g. openai:gpt-4o-mini (default: $MEMORY_MODEL, else the offline model)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="hide the lines that say what memory did"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="a model call's whole budget in seconds: the request is sent once, not retried, "
        "and the turn fails when it takes longer (openai, azure_openai and anthropic models; "
        "default: 60)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="memory-plugin", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    consolidate = commands.add_parser(
        "consolidate", help="fold notes older than the minimum age into each scope's document"
    )
    consolidate.add_argument(
        "--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)"
    )
    consolidate.add_argument("--model", help="chat model (default: $MEMORY_MODEL)")
    consolidate.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes to run at once, each scope leased to one at a time (default: 1)",
    )
    consolidate.add_argument(
        "--worker-id", help="this worker's id in leases and the run log (default: host:pid:tag)"
    )
    consolidate.add_argument(
        "--lease-seconds",
        type=float,
        default=300.0,
        help="how long a worker's claim on a scope lasts if it dies; at least the model "
        "timeout, consolidation_timeout_seconds (default: 300)",
    )
    _screen_option(consolidate)
    consolidate.set_defaults(run=_consolidate)
    history = commands.add_parser(
        "history", help="list the saved versions of a scope's memory document"
    )
    _scope_options(history)
    history.set_defaults(run=_history)
    restore = commands.add_parser(
        "restore", help="save an earlier version of a scope's memory document as the current one"
    )
    _scope_options(restore)
    restore.add_argument("version", type=int, help="the version to restore (see history)")
    restore.add_argument(
        "--model", help="chat model to compress an over-long version (default: $MEMORY_MODEL)"
    )
    _screen_option(restore)
    restore.set_defaults(run=_restore)
    audit = commands.add_parser(
        "recall-audit",
        help="recall@k of the fused recall order against an exact search (read before "
        "enabling rerank)",
    )
    audit.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    audit.add_argument("--user", help="audit this user's scope (or use --sample)")
    audit.add_argument("--workspace", help="the workspace (required with --shared)")
    audit.add_argument(
        "--shared", action="store_true", help="the workspace's team memory, not the user's"
    )
    audit.add_argument("--sample", type=int, help="audit N scopes picked at random")
    audit.add_argument(
        "--queries", help="a file of queries, one a line (default: sampled from each scope's notes)"
    )
    audit.add_argument(
        "--per-scope", type=int, default=20, help="queries sampled per scope (default: 20)"
    )
    audit.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    audit.add_argument(
        "--candidates",
        type=int,
        help="recall's candidate breadth to audit (default: each scope's recall_candidates)",
    )
    audit.add_argument(
        "--keyword-only",
        action="store_true",
        help="open the store without the embedding index (the chatbot's by default)",
    )
    audit.add_argument("--json", action="store_true", help="print JSON instead of a table")
    audit.set_defaults(run=_recall_audit)
    chat = commands.add_parser(
        "chat",
        help="chat with memory (on the built-in offline model when no model is configured)",
        description="Chat in the terminal with durable memory; /help lists the commands. "
        "Ctrl-C cancels a turn or command at once (the turn is taken back); at the prompt it "
        "quits.",
    )
    _chat_options(chat)
    _screen_option(chat)
    chat.set_defaults(run=_chat)
    demo = commands.add_parser(
        "demo", help="a scripted tour of every memory kind, offline (user demo-ann)"
    )
    demo.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    demo.set_defaults(run=_demo)
    add_forget_command(commands)
    add_privacy_commands(commands)
    add_mcp_command(commands)
    serve = commands.add_parser(
        "serve",
        help="the operator console (web page and REST API) on http://127.0.0.1:8765/",
        description="Serve the console. Without --tokens (or $MEMORY_AUTH_TOKENS) it makes a "
        "development token for --user and prints it with the console's URL.",
    )
    serve.add_argument("--url", help="backend URL (default: $MEMORY_URL or ./.memory/memory.db)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port to listen on (8765)")
    serve.add_argument(
        "--user",
        default=os.environ.get("USER") or "me",
        help="the development token's user (default: $USER, like `chat`)",
    )
    serve.add_argument(
        "--workspace",
        action="append",
        help="a workspace the development user is a member of, besides every workspace "
        "holding their personal memory (repeatable; default: none)",
    )
    serve.add_argument(
        "--space",
        action="append",
        help="a space whose settings the development user administers (repeatable)",
    )
    serve.add_argument(
        "--tokens",
        help="a JSON token file (default: $MEMORY_AUTH_TOKENS); no development token then",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level (default: info)",
    )
    _screen_option(serve)
    serve.set_defaults(run=_serve)
    args = parser.parse_args(argv)
    try:
        if getattr(args, "screen", None) is not None:
            args.screen = load_check(args.screen)
        return int(args.run(args))
    except MemoryPluginError as exc:
        print(f"memory-plugin: {exc}", file=sys.stderr)
        return 2


def _version() -> str:
    try:
        return version("memory-plugin")
    except PackageNotFoundError:
        return "unknown (not installed)"


if __name__ == "__main__":
    sys.exit(main())

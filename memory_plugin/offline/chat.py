"""The example chatbot: a terminal chat on the embedded default (SQLite under ./.memory).

`memory-plugin chat` (or `python examples/chatbot.py`). The model comes from --model or
$MEMORY_MODEL (`openai:gpt-4o-mini`, with OPENAI_BASE_URL for any OpenAI-compatible server);
with none it says so and chats on the built-in offline model. Lines starting "  ·" and "  ↳"
say what memory and the model did (--quiet leaves them out). A turn that fails (the model
unreachable, a timeout, a rate limit) prints one line, naming the URL tried when the model was
not reached, and is taken back, so the thread is as it was before it; Ctrl-C cancels a turn the
same way at once, even while a model call hangs. What background work logs (a profile update
discarded after its turn) goes to stderr without breaking the prompt line (offline/console.py).
`memory-plugin demo` plays a scripted tour through the very same graph.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, TextIO, cast
from urllib.parse import quote

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.types import StateSnapshot

from memory_plugin.backends import Backend
from memory_plugin.connection import connect
from memory_plugin.context_management.journal import entries_plan, take_back_plan
from memory_plugin.context_management.journaling import ACTIONS, SEQ
from memory_plugin.context_management.masking import is_masked
from memory_plugin.context_management.nodes import summarize_now
from memory_plugin.models import MODEL_ENV, resolve_model
from memory_plugin.offline.cancellable import cancellable, ctrl_c_cancels
from memory_plugin.offline.console import Console
from memory_plugin.offline.demo import DemoModel
from memory_plugin.offline.local_embeddings import LocalEmbeddings, default_index
from memory_plugin.plans import run
from memory_plugin.prebuilt.graph import create_memory_graph
from memory_plugin.profile.budget import body
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from memory_plugin.safety.staged import Check, screen_from, screening
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.doors import door_context, workspace_words
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scoped.api import ScopedMemory
from memory_plugin.settings import LayeredSettings, SettingsCache

logger = logging.getLogger(__name__)
SYSTEM_PROMPT = "You are a helpful assistant with durable memory. Be concise."
PROFILE_WAIT = 60.0  # seconds /profile and leaving wait for the profile's background update
HELP = (
    "/memory  what memory put in front of the model this turn\n"
    "/notes   this scope's notes        /forget N   delete note N\n"
    "/profile your user profile         /quit       leave\n"
    "/help    this help"
)
SUMMARIZE_HELP = "\n/summarize  compact the thread now"
PROBLEMS = {
    "APIConnectionError": "the model could not be reached",
    "APITimeoutError": "the model timed out",
    "TimeoutError": "the model timed out",
    "RateLimitError": "the model's rate limit was hit",
    "AuthenticationError": "the model refused the API key",
    "KeyboardInterrupt": "interrupted",
    "ConnectError": "the model could not be reached",
    "TimeoutException": "the model timed out",
}
UNREACHED = frozenset({"APIConnectionError", "ConnectError", "TimeoutException"})


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page (the demo returns a canned page; a changelog is three times longer)."""
    repeats = 120 if "changelog" in url else 40
    return f"<page {url}> " + "Release notes, migration guides and changelog entries. " * repeats


class Chat:
    """One chat session: a graph on a backend, a user context and a thread."""

    def __init__(
        self,
        backend: Backend,
        model: BaseChatModel,
        ctx: MemoryContext,
        thread: str,
        out: TextIO,
        screen: Check | None = None,
        *,
        quiet: bool = False,
    ) -> None:
        self.backend, self.ctx, self.out = backend, ctx, out
        self.console = Console(out, quiet=quiet)
        self.cancel = threading.Event()
        self.graph = create_memory_graph(
            cancellable(model, self.cancel),
            [fetch_page],
            store=backend.store,
            checkpointer=backend.checkpointer,
            system_prompt=SYSTEM_PROMPT,
            screen=screen,
        )
        self.config: RunnableConfig = {
            "configurable": {"thread_id": thread},
            "metadata": {OWNER_METADATA_KEY: ctx.user_id},
        }
        self.notes = ScopedMemory(backend.store)

    def say(self, text: str) -> None:
        """Print one line."""
        self.console.say(text)

    def state(self) -> dict[str, Any]:
        """The thread's current values."""
        return dict(self.graph.get_state(self.config).values)

    def send(self, text: str) -> None:
        """One turn: stream memory events, print the answer. A turn that fails prints one
        line and is taken back, so the thread is as it was before it; Ctrl-C cancels it at
        once, a model call in flight included."""
        try:
            before = self.graph.get_state(self.config)
        except Exception as exc:
            self.say(f"  ! {problem(exc, 'the thread could not be read')}; try again.")
            return
        try:
            with ctrl_c_cancels(self.cancel):
                self._stream(text)
        except (Exception, KeyboardInterrupt) as exc:
            logger.debug("the turn failed", exc_info=True)
            kept = self._take_back(before)
            again = "the turn was taken back, try again" if kept else "it may be half-kept"
            self.say(f"  ! {problem(exc)}; {again}.")

    def _take_back(self, before: StateSnapshot) -> bool:
        """Return the thread (checkpoints and journal) to its state before a failed turn;
        whether that worked."""
        thread = str(self.config["configurable"]["thread_id"])
        failed = self.state().get("memory_context") or {}
        seq = int((before.values.get("memory_context") or {}).get(SEQ, 0))
        try:
            if before.config["configurable"].get("checkpoint_id"):
                self.graph.update_state(before.config, None, as_node="__copy__")
            else:
                self.backend.checkpointer.delete_thread(thread)
            run(self.backend.store, take_back_plan(thread, seq, int(failed.get(SEQ, seq))))
        except Exception:
            logger.warning("the failed turn of thread %s could not be taken back", thread)
            return False
        return True

    def _stream(self, text: str) -> None:
        stream = self.graph.stream(
            {"messages": [HumanMessage(text)]},
            self.config,
            context=self.ctx,
            stream_mode=["custom", "updates"],
        )
        for mode, chunk in cast(Iterator[tuple[str, Any]], stream):
            if mode == "custom" and chunk["action"] not in ACTIONS:
                kind, action = (chunk[key].replace("_", " ") for key in ("kind", "action"))
                self.console.event(f"  · {kind} {action}{_details(chunk)}")
            elif "agent" in chunk:
                message = chunk["agent"]["messages"][-1]
                if not message.tool_calls:
                    self.say(f"assistant> {message.text}")
                for call in message.tool_calls:
                    self.console.event(f"  ↳ {call['name']}({_short(call['args'])})")

    def show_history(self) -> None:
        """A resumed thread, replayed from its journal (turns compacted away included), with
        every compaction divider where it happened."""
        values = self.state()
        messages, times = self._transcript(values.get("messages", []))
        dividers = values.get("memory_context", {}).get("dividers", [])
        at = _divider_positions(dividers, [m.id for m in messages], times)
        for i, message in enumerate([*messages, None]):
            for d in (d for d, position in zip(dividers, at, strict=True) if position == i):
                tokens = f"~{d['tokens_before']:,} → ~{d['tokens_after']:,} tokens"
                self.say(f"──── {d['text']} ({tokens}) ────")
            if isinstance(message, HumanMessage):
                self.say(f"you> {message.text}")
            elif isinstance(message, AIMessage) and not message.tool_calls:
                self.say(f"assistant> {message.text}")
            elif isinstance(message, ToolMessage) and is_masked(message):
                self.say(f"  [masked output of {message.name}]")

    def _transcript(
        self, in_state: Sequence[BaseMessage]
    ) -> tuple[list[BaseMessage], list[str | None]]:
        """Every message of the thread, oldest first, with its journal time: the journal's,
        where the state still holds a message its version (masked outputs show as masked),
        then any not journaled yet. Without a readable journal, the state's messages."""
        thread = str(self.config["configurable"]["thread_id"])
        try:
            entries = run(self.backend.store, entries_plan(thread))
        except Exception:
            logger.warning("the journal of thread %s could not be read", thread, exc_info=True)
            entries = []
        current = {m.id: m for m in in_state if m.id}
        journaled = {e.message_id for e in entries}
        messages = [current.get(e.message_id or "") or e.to_message() for e in entries]
        times: list[str | None] = [e.created_at for e in entries]
        rest = [m for m in in_state if not m.id or m.id not in journaled]
        return [*messages, *rest], [*times, *[None] * len(rest)]

    def command(self, line: str) -> bool:
        """Run a slash command (Ctrl-C cancels it); False when the user quits."""
        name, _, arg = line.partition(" ")
        if name == "/quit":
            return False
        try:
            with ctrl_c_cancels(self.cancel):
                self._command(name, arg.strip())
        except (Exception, KeyboardInterrupt) as exc:
            logger.debug("%s failed", name, exc_info=True)
            self.say(f"  ! {problem(exc, f'{name} failed')}")
        return True

    def _command(self, name: str, arg: str) -> None:
        if name == "/help":
            self.say(HELP + (SUMMARIZE_HELP if self.manual_compaction() else ""))
        elif name == "/notes":
            notes = self.notes.list_notes(self.ctx)
            self.say(
                "\n".join(f"{n}. {note.render()}" for n, note in enumerate(notes, 1))
                or "(no notes)"
            )
        elif name == "/forget":
            notes = self.notes.list_notes(self.ctx)
            if not notes:
                self.say("There are no notes to forget yet.")
            elif not arg.isdigit() or not 1 <= int(arg) <= len(notes):
                what = f"There is no note {arg}: " if arg else "usage: "
                self.say(f"{what}/forget N, with N from /notes (1-{len(notes)})")
            else:
                self.notes.delete_note(self.ctx, notes[int(arg) - 1].key)
                self.say(f"forgot note {arg}")
        elif name == "/profile":
            wait_for_profiles(PROFILE_WAIT)  # the last turn's update, still in the background
            profile = ProfileMemory(self.backend.store).read(self.ctx)
            self.say(body(profile) if profile else "(no profile yet)")
        elif name == "/memory":
            values = self.state()
            blocks = values.get("memory_blocks") or []
            self.say("\n\n".join(b["text"] for b in blocks) or "(nothing injected yet)")
        elif name == "/summarize":
            self.summarize()
        else:
            self.say(f"unknown command {name}; /help lists them")

    def manual_compaction(self) -> bool:
        """Whether the deployment offers Summarize now."""
        return LayeredSettings(self.backend.store).get(self.ctx).values.compaction_manual

    def summarize(self) -> None:
        """Summarize now, when the deployment enables it."""
        if not self.manual_compaction():
            self.say("Summarize now is off (set MEMORY_COMPACTION_MANUAL=true to enable it).")
            return
        report = summarize_now(self.graph, self.config, context=self.ctx)
        self.say(report["message"])


def thread_id(ctx: MemoryContext, thread: str) -> str:
    """The checkpointer's id for a chat thread: a private thread is the user's own in the
    workspace, a shared one the workspace's, each in its org, so one name never opens another
    person's thread (nor one of a user or workspace of the same id in another org)."""
    tenant = ["org", ctx.org_id] if ctx.org_id else []
    if ctx.thread_visibility == "shared":
        owner = [*tenant, "team", ctx.workspace_id or ""]
    else:
        owner = [*tenant, "user", ctx.workspace_id or "", ctx.user_id or ""]
    return ":".join(quote(part, safe="") for part in [*owner, thread])


def problem(exc: BaseException, what: str = "the turn failed") -> str:
    """A failure in one line: what went wrong (where, for a model not reached), then the
    error's type and first line."""
    names = [cls.__name__ for cls in type(exc).__mro__]
    what = next((PROBLEMS[n] for n in names if n in PROBLEMS), what)
    url = _request_url(exc) if UNREACHED.intersection(names) else None
    what += f" at {url}" if url else ""
    detail = (str(exc).strip().splitlines() or [""])[0][:160]
    return f"{what} ({type(exc).__name__}{': ' + detail if detail else ''})"


def _request_url(exc: BaseException) -> str | None:
    """The URL of the request an HTTP client's error carries, if any."""
    try:
        request = getattr(exc, "request", None)
    except RuntimeError:  # httpx: an error raised without its request
        return None
    url = getattr(request, "url", None)
    return str(url) if url else None


def _divider_positions(
    dividers: Sequence[dict[str, Any]], ids: Sequence[str | None], times: Sequence[str | None]
) -> list[int]:
    """Where each divider goes: before the message it was cut at, or, when that message is
    unknown, before the first message journaled after it; never before an earlier one."""
    index = {message_id: i for i, message_id in enumerate(ids) if message_id}
    when = [datetime.fromisoformat(t) if t else None for t in times]
    positions: list[int] = []
    for d in dividers:
        position = index.get(d.get("before_message_id") or "")
        if position is None:
            cut = datetime.fromisoformat(d["at"])
            later = (i for i, t in enumerate(when) if t is None or t > cut)
            position = next(later, len(ids))
        positions.append(max([position, *positions[-1:]]))
    return positions


def _short(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) < 70 else text[:67] + "..."


def _details(chunk: dict[str, Any]) -> str:
    details = {k: v for k, v in chunk["details"].items() if v not in (None, [], {})}
    return f" {_short(details)}" if details else ""


def _demo_model() -> DemoModel:
    def call(name: str, n: int, **args: Any) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"demo-{name}-{n}"}])

    script: list[Any] = [
        "Nice to meet you, Ann! How can I help with your data engineering work?",
        call("remember", 1, text="The release freeze starts on Friday"),
        "Noted: the release freeze starts on Friday.",
        "Understood, I'll keep answers short.",
        call("recall", 2, query="release freeze"),
        "From memory: the release freeze starts on Friday.",
    ]
    for n in range(1, 9):
        page = f"release/{n}" if n <= 6 else f"changelog/{n - 6}"
        script += [call("fetch_page", 10 + n, url=f"https://example.com/{page}"), f"Read {page}."]
    return DemoModel(script=script, profile={"max_input_tokens": 6_000})


DEMO = [
    ("demo-session-1", "Hi, my name is Ann. I'm a data engineer at Acme."),
    ("demo-session-1", "Please remember that the release freeze starts on Friday."),
    ("demo-session-1", "I prefer short answers."),
    ("demo-session-2", "What do you remember about the release?"),
    *[("demo-session-3", f"Read release page {n} for me.") for n in range(1, 7)],
    *[("demo-session-3", f"Read changelog part {n} for me.") for n in range(1, 3)],
]


def run_demo(url: str | None, out: TextIO) -> None:
    """The scripted offline demo: three sessions through the real graph."""
    print("DEMO (offline, scripted stand-in model, not an LLM)", file=out)
    model = _demo_model()
    ctx = MemoryContext(user_id="demo-ann", workspace_id="demo")
    with connect(url) as backend:
        thread = ""
        chat: Chat | None = None
        for session, text in DEMO:
            if session != thread:
                thread = session
                chat = Chat(backend, model, ctx, session, out)
                print(f"\n=== {session} ===", file=out)
            assert chat is not None
            chat.say(f"you> {text}")
            chat.send(text)
            wait_for_profiles(PROFILE_WAIT)  # a scripted tour: the next line sees the profile
        assert chat is not None
        print("\n=== your profile after the sessions ===", file=out)
        chat.command("/profile")
        print("\n=== session 3 reopened: where the conversation was compacted ===", file=out)
        chat.show_history()
    print(
        "\nDemo done. `memory-plugin chat` chats on the offline model; set MEMORY_MODEL "
        "(e.g. openai:gpt-4o-mini) to chat with a real one.",
        file=out,
    )


def chat(args: argparse.Namespace, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    """The interactive chat for the parsed options of `memory-plugin chat`."""
    ctx = door_context(args.user, workspace=args.workspace, shared=args.shared)
    if args.model or os.environ.get(MODEL_ENV):
        model = resolve_model(args.model, timeout=args.timeout)
    else:
        from memory_plugin.offline import OfflineModel

        model = OfflineModel()
        print(
            f"No model configured (--model or ${MODEL_ENV}): chatting with the built-in offline "
            "model, a rule-based stand-in, not an LLM.",
            file=out,
        )
    index = default_index()
    if isinstance(index["embed"], LocalEmbeddings):
        index["embed"].load()
    check: Check | None = getattr(args, "screen", None)
    staged = screen_from(check, SettingsCache(None).base, model)
    with connect(args.url, index=index) as backend, screening(staged):
        thread = thread_id(ctx, args.thread)
        session = Chat(backend, model, ctx, thread, out, screen=check, quiet=args.quiet)
        with session.console.logging():
            try:
                print(
                    f"Chatting as {ctx.user_id} in {workspace_words(ctx.workspace_id)}, "
                    f"agent {ctx.agent_id}, thread {args.thread}.",
                    file=out,
                )
                session.show_history()
                session.say("Type a message, or /help.")
                for line in session.console.lines(stdin):
                    if line.startswith("/"):
                        if not session.command(line):
                            break
                    elif line:
                        session.send(line)
            except KeyboardInterrupt:
                print(file=out)
            finally:  # the last turns' profile updates (redone from the journal if cut short)
                wait_for_profiles(PROFILE_WAIT)
    return 0

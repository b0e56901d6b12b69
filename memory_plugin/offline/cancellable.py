"""Model calls that Ctrl-C ends at once, for the chatbot.

A sync LangGraph run calls the model in a worker thread and, when the run stops, waits for
that call to return: a Ctrl-C during a request that never answers held the chat until the
client's timeout. `CancellableModel` runs each call in a daemon thread of its own and stops
waiting as soon as its `cancel` event is set (the call is abandoned, its answer never used);
within `ctrl_c_cancels(cancel)` a Ctrl-C sets the event before raising KeyboardInterrupt.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from contextvars import copy_context
from types import FrameType
from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool

from memory_plugin.tokens import model_name

POLL_SECONDS = 0.1


class ModelCallCancelled(KeyboardInterrupt):
    """The user's Ctrl-C, raised where the model's answer was awaited."""


class CancellableModel(BaseChatModel):
    """A chat model whose calls stop waiting the moment `cancel` is set."""

    inner: BaseChatModel
    cancel: threading.Event
    model_name: str | None = None
    bound: Runnable[LanguageModelInput, BaseMessage] | None = None

    @property
    def _llm_type(self) -> str:
        return self.inner._llm_type

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], **kwargs: Any
    ) -> CancellableModel:
        """The inner model with `tools` bound, still cancellable."""
        return self.model_copy(update={"bound": self.inner.bind_tools(tools, **kwargs)})

    def invoke(
        self,
        input: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        """The inner model's answer; ModelCallCancelled as soon as `cancel` is set."""
        model = self.bound or self.inner
        reply = self._wait(lambda: model.invoke(input, config, stop=stop, **kwargs))
        return cast(AIMessage, reply)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.invoke(messages, stop=stop, **kwargs)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _wait(self, call: Callable[[], BaseMessage]) -> BaseMessage:
        """The call's answer from a daemon thread; ModelCallCancelled once `cancel` is set."""
        if self.cancel.is_set():
            raise ModelCallCancelled("cancelled before the model was called")
        answer: Future[BaseMessage] = Future()
        context = copy_context()

        def work() -> None:
            try:
                answer.set_result(context.run(call))
            except BaseException as exc:
                answer.set_exception(exc)

        threading.Thread(target=work, name="memory-plugin-chat-model", daemon=True).start()
        while True:
            try:
                return answer.result(timeout=POLL_SECONDS)
            except FutureTimeout:
                if self.cancel.is_set():
                    raise ModelCallCancelled("cancelled while the model was answering") from None


def cancellable(model: BaseChatModel, cancel: threading.Event) -> CancellableModel:
    """`model`, its calls ended by setting `cancel` (profile and name kept for token counts)."""
    return CancellableModel(
        inner=model, cancel=cancel, profile=model.profile, model_name=model_name(model)
    )


@contextmanager
def ctrl_c_cancels(cancel: threading.Event) -> Iterator[None]:
    """Within the block, Ctrl-C sets `cancel`, then raises KeyboardInterrupt as usual (in the
    main thread, where Python's default handler is in place; elsewhere nothing changes)."""
    cancel.clear()
    default = signal.default_int_handler
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not default
    ):
        yield
        return

    def interrupted(signum: int, frame: FrameType | None) -> None:
        cancel.set()
        default(signum, frame)

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, default)

"""A timed model call (the compaction summary's) runs on a reused daemon worker: it still
gives up at its timeout, a hung call never holds the next one, and a hung call does not keep
the process from exiting. Sync and async."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.memory import InMemoryStore
from pydantic import Field

from memory_plugin.plans import ModelCall
from tests.holds import HeldModel

ASK = [HumanMessage("summarize")]
TIMEOUT = 0.2


class Answering(BaseChatModel):
    """Answers at once and records the thread that ran each call."""

    threads: list[threading.Thread] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "answering"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.threads.append(threading.current_thread())
        return ChatResult(generations=[ChatGeneration(message=AIMessage("summary"))])


@pytest.fixture
def hung() -> Iterator[HeldModel]:
    model = HeldModel()
    yield model
    model.hold.release.set()


def test_a_hung_timed_call_gives_up_and_the_next_call_answers(hung: HeldModel) -> None:
    store = InMemoryStore()
    with pytest.raises(TimeoutError, match=r"did not answer within 0\.2 s"):
        ModelCall(hung, ASK, timeout=TIMEOUT).run(store)
    answering = Answering(threads=[])
    reply = ModelCall(answering, ASK, timeout=TIMEOUT).run(store)
    assert reply.content == "summary"
    assert hung.hold.entered == 1
    assert hung.hold.answered == 0, "the second call waited for the hung one"
    assert answering.threads[0] is not threading.current_thread()
    assert answering.threads[0].daemon


async def test_a_hung_timed_async_call_gives_up_and_the_next_call_answers(
    hung: HeldModel,
) -> None:
    store = InMemoryStore()
    with pytest.raises(TimeoutError, match=r"did not answer within 0\.2 s"):
        await ModelCall(hung, ASK, timeout=TIMEOUT).arun(store)
    answering = Answering(threads=[])
    reply = await ModelCall(answering, ASK, timeout=TIMEOUT).arun(store)
    assert reply.content == "summary"
    assert hung.hold.answered == 0, "the second call waited for the hung one"
    assert answering.threads[0].daemon


def test_timed_calls_in_a_row_share_a_worker() -> None:
    """Each call does not start a thread of its own: a worker that answered takes the next."""
    answering = Answering(threads=[])
    for _ in range(6):
        ModelCall(answering, ASK, timeout=5.0).run(InMemoryStore())
    assert len(set(answering.threads)) < len(answering.threads)


@pytest.mark.slow
def test_a_hung_timed_call_does_not_block_exit() -> None:
    code = (
        "from langchain_core.messages import HumanMessage\n"
        "from langgraph.store.memory import InMemoryStore\n"
        "from memory_plugin.plans import ModelCall\n"
        "from tests.holds import HeldModel\n"
        "try:\n"
        "    ModelCall(HeldModel(), [HumanMessage('x')], timeout=0.1).run(InMemoryStore())\n"
        "except TimeoutError:\n"
        "    print('gave up')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).parent.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "gave up"

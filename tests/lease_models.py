"""Chat models for the sharded-job tests, standing where the maintenance LLM would answer:
slow, blocked for good, held at a gate, outlasting the worker's lease, or hanging or failing
in one worker process of several."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import ConfigDict

from tests.fakes import MergingModel

MARK_ENV = "LEASE_TEST_MARK"


class SlowMergingModel(MergingModel):
    """MergingModel that takes `delay` seconds per answer, so workers overlap."""

    delay: float = 0.05

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return super()._generate(messages, *args, **kwargs)


def slow_merging_model() -> SlowMergingModel:
    """A fresh SlowMergingModel (for `memory-plugin consolidate --model`)."""
    return SlowMergingModel()


class BlockingModel(MergingModel):
    """Touches the file $LEASE_TEST_MARK names, then never answers (a hung provider)."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        Path(os.environ[MARK_ENV]).touch()
        time.sleep(3_600)
        raise AssertionError("the test kills this process first")


def blocking_model() -> BlockingModel:
    """A fresh BlockingModel (for `memory-plugin consolidate --model`)."""
    return BlockingModel()


class GatedModel(MergingModel):
    """MergingModel that sets `entered` and waits for `gate` before its first answer."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    entered: threading.Event
    gate: threading.Event

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.entered.set()
        assert self.gate.wait(timeout=60), "the test never opened the gate"
        return super()._generate(messages, *args, **kwargs)


class OutlastingModel(MergingModel):
    """MergingModel that answers only after `before_answer` ran (another worker taking the
    scope once this worker's lease expired)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    before_answer: Any

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.before_answer()
        return super()._generate(messages, *args, **kwargs)


def _claim(mark: Path) -> bool:
    """Whether this process is the first to claim `mark` (which then holds its pid)."""
    draft = mark.with_name(f"{mark.name}.{os.getpid()}")
    draft.write_text(str(os.getpid()))
    try:
        os.link(draft, mark)
    except FileExistsError:
        return False
    finally:
        draft.unlink()
    return True


class HangsInOneWorkerModel(SlowMergingModel):
    """The first worker process to ask it claims $LEASE_TEST_MARK (its pid written there) and
    never answers, waiting to be killed; every other answer merges."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if _claim(Path(os.environ[MARK_ENV])):
            time.sleep(3_600)
            raise AssertionError("the test kills this process first")
        return super()._generate(messages, *args, **kwargs)


def hangs_in_one_worker() -> HangsInOneWorkerModel:
    """A fresh HangsInOneWorkerModel (for `memory-plugin consolidate --workers N --model`)."""
    return HangsInOneWorkerModel()


def fails_in_one_worker() -> SlowMergingModel:
    """A SlowMergingModel, except in the first worker process to load it (claiming
    $LEASE_TEST_MARK): there it fails, as a provider that refuses the worker's credentials."""
    if multiprocessing.parent_process() is not None and _claim(Path(os.environ[MARK_ENV])):
        raise RuntimeError("the provider refused this worker's credentials")
    return SlowMergingModel()

"""Chat models for the sharded-job tests, standing where the maintenance LLM would answer:
slow, blocked for good, held at a gate, or outlasting the worker's lease."""

from __future__ import annotations

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

"""The chat's terminal: whole lines, the prompt, and what background work says (a log record
from a profile update running after its turn) on a line of its own, the prompt drawn again
after it, so nothing lands on the line the user is typing on."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

PROMPT = "you> "


class Console:
    """The chat's output; `quiet` leaves out the lines saying what memory did."""

    def __init__(self, out: TextIO, *, quiet: bool = False) -> None:
        self.out, self.quiet = out, quiet
        self._lock = threading.Lock()
        self._prompting = False

    def say(self, text: str) -> None:
        """Print one line."""
        self.tell(text)

    def event(self, text: str) -> None:
        """Print a line saying what memory did, unless quiet."""
        if not self.quiet:
            self.tell(text)

    def tell(self, text: str) -> None:
        """Print a line from any thread: below the prompt, drawn again, when it is showing."""
        with self._lock:
            if self._prompting:
                self._write(f"\n{text}\n{PROMPT}")
            else:
                self._write(f"{text}\n")

    def lines(self, stdin: TextIO) -> Iterator[str]:
        """The user's lines, each read after the prompt, stripped, until the input ends."""
        while True:
            with self._lock:
                self._write(PROMPT)
                self._prompting = True
            try:
                line = stdin.readline()
            finally:
                with self._lock:
                    self._prompting = False
            if not line:
                return
            yield line.strip()

    @contextmanager
    def logging(self, level: int = logging.WARNING) -> Iterator[None]:
        """Inside, log records of `level` and above (background work's included) are told."""
        handler = _Handler(self, level)
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            yield
        finally:
            root.removeHandler(handler)

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


class _Handler(logging.Handler):
    def __init__(self, console: Console, level: int) -> None:
        super().__init__(level)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.tell(f"  ! {self.format(record)}")
        except Exception:
            self.handleError(record)

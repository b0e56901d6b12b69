"""The chat's terminal: whole lines, the prompt, and what background work logs (a profile update
discarded after its turn) on stderr, on a line of its own: when both streams are a terminal and
the prompt is showing, below it, and the prompt is drawn again, so nothing lands on the line the
user is typing on."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

PROMPT = "you> "


class Console:
    """The chat's output; `quiet` leaves out the lines saying what memory did; log records go
    to `err` (stderr)."""

    def __init__(self, out: TextIO, *, quiet: bool = False, err: TextIO | None = None) -> None:
        self.out, self.quiet, self.err = out, quiet, err or sys.stderr
        self._lock = threading.Lock()
        self._prompting = False

    def say(self, text: str) -> None:
        """Print one line."""
        with self._lock:
            _write(self.out, f"{text}\n")

    def event(self, text: str) -> None:
        """Print a line saying what memory did, unless quiet."""
        if not self.quiet:
            self.say(text)

    def warn(self, text: str) -> None:
        """Write a line to stderr from any thread: in a terminal showing the prompt, below the
        prompt, which is drawn again after it."""
        with self._lock:
            redraw = self._prompting and _terminal(self.out) and _terminal(self.err)
            if redraw:
                _write(self.out, "\n")
            _write(self.err, f"{text}\n")
            if redraw:
                _write(self.out, PROMPT)

    def lines(self, stdin: TextIO) -> Iterator[str]:
        """The user's lines, each read after the prompt, stripped, until the input ends."""
        while True:
            with self._lock:
                _write(self.out, PROMPT)
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
        """Inside, log records of `level` and above (background work's included) are warned."""
        handler = _Handler(self, level)
        root = logging.getLogger()
        root.addHandler(handler)
        try:
            yield
        finally:
            root.removeHandler(handler)


def _write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def _terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a stream without a file, or closed
        return False


class _Handler(logging.Handler):
    def __init__(self, console: Console, level: int) -> None:
        super().__init__(level)
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.warn(f"  ! {self.format(record)}")
        except Exception:
            self.handleError(record)

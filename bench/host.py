"""The host's load beside a benchmark's numbers, so a run on a busy machine says so.

    load = HostLoad.start()
    ... the benchmark ...
    load.finish()
    print(load.line())   # "host: 2 cores, load 0.31 before, 1.12 after (quiet)"

A run is marked loaded when other work shared the machine: the 1-minute load average before it,
or after it less the one core the benchmark itself keeps busy, above half the cores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

BENCH_OWN_LOAD = 1.0
LOADED_PER_CORE = 0.5


def _load() -> tuple[float, float, float]:
    return os.getloadavg()


@dataclass
class HostLoad:
    """Load averages (1, 5, 15 minutes) before and after a run, and the core count."""

    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    after: tuple[float, float, float] | None = None

    @classmethod
    def start(cls) -> HostLoad:
        """Record the load now, before the run."""
        return cls(before=_load())

    def finish(self) -> HostLoad:
        """Record the load now, after the run."""
        self.after = _load()
        return self

    @property
    def others(self) -> float:
        """The load other work put on the machine (1-minute averages)."""
        after = self.after[0] - BENCH_OWN_LOAD if self.after else 0.0
        return max(self.before[0], after, 0.0)

    @property
    def loaded(self) -> bool:
        """Whether other work kept more than half the cores busy."""
        return self.others > LOADED_PER_CORE * self.cores

    def line(self) -> str:
        """One line for the run's output."""
        after = f", {self.after[0]:.2f} after" if self.after else ""
        state = "LOADED: timings are not comparable with a quiet run" if self.loaded else "quiet"
        return f"host: {self.cores} cores, load {self.before[0]:.2f} before{after} ({state})"

    def to_json(self) -> dict[str, Any]:
        """The record for a benchmark's --json output."""
        return {
            "cores": self.cores,
            "load_before": list(self.before),
            "load_after": list(self.after) if self.after else None,
            "loaded": self.loaded,
        }

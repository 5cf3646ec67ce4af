"""Progress bars for long launches, on the terminal only (rich, on stderr, gone when done)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class LaunchProgress:
    """Makes a ``(done, total)`` callback per kernel; a bar appears once a launch runs past ``delay`` s."""

    def __init__(self, delay: float = 0.5):
        self.enabled = sys.stderr.isatty()
        self.delay = delay
        self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("programs"), TimeElapsedColumn(),
                                  console=Console(stderr=True), transient=True)
        self._started = False

    def for_kernel(self, name: str) -> Callable[[int, int], None] | None:
        """The callback for launches of kernel ``name`` (None when not on a terminal)."""
        if not self.enabled:
            return None
        state: dict = {}

        def update(done: int, total: int) -> None:
            now = time.monotonic()
            state.setdefault("start", now)
            if done >= total:
                if "task" in state:
                    self._progress.remove_task(state.pop("task"))
                state.clear()
                return
            if "task" not in state and now - state["start"] >= self.delay:
                self._start()
                state["task"] = self._progress.add_task(name, total=total)
            if "task" in state:
                self._progress.update(state["task"], completed=done)

        return update

    def close(self) -> None:
        """Stop drawing."""
        if self._started:
            self._progress.stop()
            self._started = False

    def _start(self) -> None:
        if not self._started:
            self._progress.start()
            self._started = True

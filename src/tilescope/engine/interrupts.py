"""Code that must run whole: a Ctrl-C that arrives inside it takes effect when it ends."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block whole: a SIGINT (Ctrl-C) arriving inside it takes effect as it ends.

    Python raises ``KeyboardInterrupt`` at whatever line runs when the signal comes; in the code that
    finishes a launch that would leave clients (a tracer's writer thread, its files), result copies
    and report files half done. Signals are only handled in the main thread; elsewhere, and where
    the handler is not Python's, this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):
        yield
        return
    caught: list[tuple[int, Any]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        if caught:
            handler(*caught[0])

"""Ctrl-C during a launch: code that must run whole takes it when it ends, and a Ctrl-C Python lost
in a finalizer is delivered again at the next launch."""

from __future__ import annotations

import contextlib
import signal
import sys
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


_SWALLOWED = threading.Event()


def _note_swallowed(previous: Any) -> Any:
    def hook(unraisable: Any) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _SWALLOWED.set()
        previous(unraisable)

    return hook


@contextlib.contextmanager
def ctrl_c_not_lost() -> Iterator[None]:
    """A Ctrl-C whose ``KeyboardInterrupt`` Python swallowed is delivered again at the next launch.

    Python raises the interrupt in whatever code runs when the signal comes; when that is a
    finalizer (``__del__``, a weakref callback, run by the garbage collector at any allocation), the
    exception is printed as "Exception ignored" and lost, and a long script runs on as if never
    interrupted. Inside this block such a loss is noted, and :func:`deliver_lost_ctrl_c` raises it.
    """
    previous = sys.unraisablehook
    sys.unraisablehook = _note_swallowed(previous)
    try:
        yield
    finally:
        sys.unraisablehook = previous
        _SWALLOWED.clear()


def deliver_lost_ctrl_c() -> None:
    """Raise the ``KeyboardInterrupt`` of a Ctrl-C a finalizer swallowed (see :func:`ctrl_c_not_lost`)."""
    if _SWALLOWED.is_set():
        _SWALLOWED.clear()
        raise KeyboardInterrupt

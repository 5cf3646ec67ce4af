"""Errors the engine raises to the user, and the control signals it raises to itself.

User-facing errors name the kernel, the source line and the program; control signals derive from
``BaseException`` so that no ``except Exception`` inside Triton's language layer swallows them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TilescopeError

__all__ = [
    "TilescopeError",
    "KernelError",
    "OutOfBoundsError",
    "UnsupportedOpError",
    "DeviceAssertionError",
    "LaunchError",
    "OptionError",
    "EngineSignal",
    "Divergence",
    "NeedValues",
    "BatchTooLarge",
    "WaitDetected",
    "Stop",
]


class KernelError(TilescopeError):
    """A kernel could not run: names the kernel, the source line and what went wrong."""

    def __init__(self, message: str, *, kernel: str = "", site: Any = None, program_ids: Any = None):
        self.kernel = kernel
        self.site = site
        self.program_ids = program_ids
        where = f" at {site.file}:{site.line}" if site is not None else ""
        head = f"kernel `{kernel}`{where}: " if kernel else ""
        text = head + message
        if site is not None and site.source:
            text += f"\n  {site.line:>4} | {site.source}"
        super().__init__(text)


class OutOfBoundsError(KernelError):
    """An enabled lane of a load, store or atomic lies outside the tensor its pointer came from."""


class UnsupportedOpError(KernelError):
    """The kernel uses an operation the engine does not implement."""


class DeviceAssertionError(KernelError):
    """A ``tl.device_assert`` failed in at least one program."""


class LaunchError(TilescopeError):
    """The launch itself is wrong: arguments, grid, or tensors the engine cannot use."""


class OptionError(LaunchError, ValueError):
    """An option is unknown, has an invalid value or conflicts with another (also a ValueError)."""


# --------------------------------------------------------------------------- control signals


class EngineSignal(BaseException):
    """Raised inside a run to make the grid executor abandon the current attempt."""


class Divergence(EngineSignal):
    """Programs of one batch took different control-flow decisions at one point."""

    def __init__(self, decisions: np.ndarray, site: Any):
        super().__init__("divergence")
        self.decisions = decisions
        self.site = site


class NeedValues(EngineSignal):
    """A value that a demand-driven run skipped is needed (by an address, mask or branch)."""

    def __init__(self, origins: frozenset):
        super().__init__("need values")
        self.origins = origins


class BatchTooLarge(EngineSignal):
    """One value of the batch would exceed the memory budget; run fewer programs at once."""


class SharedLoadWritten(EngineSignal):
    """A write reached a storage whose loaded data this attempt still shares as a view (zero-copy):
    run the attempt again with those loads copied."""

    def __init__(self, sites: frozenset):
        super().__init__("shared load written")
        self.sites = sites


class WaitDetected(EngineSignal):
    """A batch spins in a while loop: its programs wait for another program (run them interleaved)."""

    def __init__(self, site: Any):
        super().__init__("wait detected")
        self.site = site


class Stop(EngineSignal):
    """A client asked to stop the launch (``--fail-fast``)."""

"""tilescope: run, check and understand tile-language GPU kernels on the CPU.

``tilescope.trace(kernel)[grid](*args)`` runs a ``@triton.jit`` kernel on the CPU engine.
"""

from .clients import Client, Finding, Report
from .engine.errors import (
    DeviceAssertionError,
    KernelError,
    LaunchError,
    OutOfBoundsError,
    TilescopeError,
    UnsupportedOpError,
)
from .frontends.triton.launch import Launcher, trace

__version__ = "0.1.0"

__all__ = [
    "trace",
    "Launcher",
    "Client",
    "Finding",
    "Report",
    "TilescopeError",
    "KernelError",
    "LaunchError",
    "OutOfBoundsError",
    "UnsupportedOpError",
    "DeviceAssertionError",
]

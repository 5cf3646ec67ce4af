"""tilescope: run, check and understand tile-language GPU kernels on the CPU.

``tilescope.trace(kernel)[grid](*args)`` runs a ``@triton.jit`` kernel on the CPU engine.
"""

from .methodcache import compiled_dataclasses

with compiled_dataclasses():  # the IR records' and the engine's dataclass methods, compiled before
    from .clients import Client, Finding, Report
    from .engine.errors import (
        DeviceAssertionError,
        KernelError,
        LaunchError,
        OutOfBoundsError,
        TilescopeError,
        UnsupportedOpError,
    )
    from .session import Session, intercepting, reports
    from .tracing import trace

__version__ = "0.1.0"

__all__ = [
    "trace",
    "Session",
    "intercepting",
    "Client",
    "Finding",
    "Report",
    "TilescopeError",
    "KernelError",
    "LaunchError",
    "OutOfBoundsError",
    "UnsupportedOpError",
    "DeviceAssertionError",
    "reports",
    "load_trace",
]


def __getattr__(name: str):
    # load_trace needs pyarrow and pandas: imported when first asked for, not with tilescope
    if name == "load_trace":
        from .clients.tracer.reader import load_trace

        return load_trace
    raise AttributeError(f"module 'tilescope' has no attribute {name!r}")

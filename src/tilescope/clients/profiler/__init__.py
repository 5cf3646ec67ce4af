"""The profiler client: where a kernel wastes memory traffic, masks and registers, per source line.

``tilescope.trace(kernel, clients="profiler")[grid](*args)`` or ``tilescope profile script.py``
reports, per source site and per launch, how a warp would issue each access (32-byte sectors per
request, efficiency, strided and scattered patterns, vector width), mask utilisation and masks
proven redundant in the launch, reuse across programs and the L2 footprint of one wave (and of
grouped program orders), FLOPs, bytes and the kernel's place on the GPU's roofline, and the
registers, spills, shared memory and occupancy of an offline compile. Deterministic: no timing.
The JSON schema is in ``docs/profiler.md``.
"""

from .client import Profiler
from .report import SCHEMA, ProfilerReport

__all__ = ["SCHEMA", "Profiler", "ProfilerReport"]

"""The sanitizer client: every bad access of every program, explained down to the element.

``tilescope.trace(kernel, clients="sanitizer")[grid](*args)`` checks every enabled lane of every
program, loop iteration and memory op against the tensor its pointer came from, and also reports
broken tensor-descriptor rules, int32 overflow in address arithmetic and failed ``device_assert``.
Findings are de-duplicated per (site, kind, argument) and rendered as compiler diagnostics, JSON or
SARIF 2.1.0 (:class:`SanitizerReport`).
"""

from .client import Sanitizer, SanitizerError
from .report import SanitizerReport

__all__ = ["Sanitizer", "SanitizerError", "SanitizerReport"]

"""The tracer client (``clients="tracer"``) and the reader of the traces it writes."""

from . import arrow  # noqa: F401  (first: it chooses Arrow's allocator as pyarrow loads)
from .client import Tracer
from .layout import TraceError

__all__ = ["Tracer", "TraceError"]

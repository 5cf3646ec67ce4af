"""The tracer client (``clients="tracer"``) and the reader of the traces it writes."""

from .client import Tracer
from .layout import TraceError

__all__ = ["Tracer", "TraceError"]

"""The determinism client: output bits that change with the order programs run in.

``tilescope.trace(kernel, clients="determinism", schedules=4)[grid](*args)`` runs the launch under
four seeded concurrent schedules from the same inputs and reports every output element whose bits
differ, at the op that wrote it last, with the values each seed left (:class:`DeterminismReport`).
"""

from .client import Determinism
from .report import DeterminismReport

__all__ = ["Determinism", "DeterminismReport"]

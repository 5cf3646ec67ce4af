"""The racecheck client: data races between the programs of a launch, at the line, both sides named.

``tilescope.trace(kernel, clients="racecheck")[grid](*args)`` keeps shadow memory of every byte
the launch touches (which program, through which source line, at which moment) and reports each
pair of conflicting accesses from different programs that no release/acquire synchronisation
orders: read-after-write, write-after-read, write-after-write, with the tensor element, both
program ids, each side's atomic semantics and scope, and a hint (:class:`RaceReport`).
"""

from .client import RaceCheck
from .report import RaceReport

__all__ = ["RaceCheck", "RaceReport"]

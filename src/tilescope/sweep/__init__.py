"""``tilescope sweep``: kernels over a matrix of shapes, dtypes, constexprs and configs, one job per
cell, on local processes or a Ray cluster, merged into one report (docs/sweep.md)."""

from .cell import STATUSES, CellResult, Limits
from .report import SweepReport
from .runner import local_backend, ray_backend, sweep
from .spec import Cell, Spec, SpecError, load

__all__ = ["Cell", "CellResult", "Limits", "Spec", "SpecError", "STATUSES", "SweepReport", "load",
           "local_backend", "ray_backend", "sweep"]

"""GPU benchmarks: register kernels with ``@tilescope.bench.register(...)``, time them, compare runs.

``tilescope.bench.register`` adds a benchmark to the registry; ``tilescope bench`` runs, compares
and tracks them (see ``docs/bench.md``). The built-in suite lives in ``tilescope.bench.suite``.
"""

from tilescope.bench.registry import Benchmark, CompileSpec, Launcher, register, registered, select

__all__ = ["Benchmark", "CompileSpec", "Launcher", "register", "registered", "select"]

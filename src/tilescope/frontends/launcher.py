"""What every frontend's launcher shares: the clients' reports, and the kernel's name (for kernels
whose Python function is ``kernel.fn``; a frontend whose kernels keep it elsewhere names it itself)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class KernelLauncher:
    """A launcher of ``self.kernel`` under ``self.clients``, with the engine's ``options``, in ``session``."""

    kernel: Any
    clients: list

    def __init__(self, kernel: Any, *, clients: list, options: Any, session: Any):
        self.kernel = kernel
        self.__tilescope_kernel__ = kernel  # tilescope.trace(launcher) traces this kernel again
        self.clients = clients
        self.options = options
        self.session = session
        #: called with (programs done, programs) on long launches (tilescope.trace sets it)
        self.progress: Callable[[int, int], None] | None = None
        self._eager: set = set()  # the sites whose data every run moves (frontends that track them)

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.kernel.fn.__name__

    @property
    def reports(self) -> list:
        """One report per client, covering every launch made through this launcher."""
        return [c.report() for c in self.clients]

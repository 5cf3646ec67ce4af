"""What every frontend's launcher shares: the clients' reports, and the kernel's name (for kernels
whose Python function is ``kernel.fn``; a frontend whose kernels keep it elsewhere names it itself)."""

from __future__ import annotations

from typing import Any


class KernelLauncher:
    """A launcher of ``self.kernel`` under ``self.clients``."""

    kernel: Any
    clients: list

    @property
    def name(self) -> str:
        """The kernel's name."""
        return self.kernel.fn.__name__

    @property
    def reports(self) -> list:
        """One report per client, covering every launch made through this launcher."""
        return [c.report() for c in self.clients]

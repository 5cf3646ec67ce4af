"""What the launchers of function-style frontends (NKI, Helion) share: the kernel's name and the
clients' reports."""

from __future__ import annotations

from typing import Any


class KernelLauncher:
    """A launcher of ``self.kernel`` (whose Python function is ``kernel.fn``) under ``self.clients``."""

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

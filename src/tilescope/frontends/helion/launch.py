"""Helion kernels on the engine: Helion's generated Triton code run through the Triton frontend.

A call ``kernel(*args)`` binds the kernel to its arguments (Helion specializes on shapes and
dtypes), compiles it for one config without autotuning (the ``config=`` option, else the config
the kernel was declared with, else Helion's default config for the bound kernel), and runs the
compiled host function with a launcher hook that sends each Triton launch to tilescope's Triton
frontend with this launcher's clients. Sites in the generated code point at the Helion lines they
came from (:mod:`linemap`).
"""

from __future__ import annotations

from typing import Any

from ...engine.grid import ExecutionOptions
from ..launcher import KernelLauncher
from ..triton import FRONTEND as TRITON
from .linemap import map_sites, note_kernel_file


class Launcher(KernelLauncher):
    """``kernel(*args)`` for a Helion kernel, on the engine; keeps its clients' reports."""

    def __init__(
        self, kernel: Any, *, clients: list, options: ExecutionOptions, session: Any, config: Any = None
    ):
        super().__init__(kernel, clients=clients, options=options, session=session)
        self.config = config
        self._triton: dict[Any, Any] = {}
        note_kernel_file(kernel.fn.__code__.co_filename)
        map_sites()

    def chosen_config(self, bound: Any) -> Any:
        """The config a launch compiles: ``config=``, the kernel's own, or Helion's default (no autotune)."""
        import helion

        if self.config is not None:
            return self.config if isinstance(self.config, helion.Config) else helion.Config(**self.config)
        if bound.configs:
            return bound.configs[0]
        return bound.config_spec.default_config()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.kernel.bind(args)
        host = bound.compile_config(self.chosen_config(bound), allow_print=False)
        return host(*args, **kwargs, _launcher=self._launch)

    def _launch(self, triton_kernel: Any, grid: tuple, *args: Any, num_warps: int, num_stages: int,
                **helion_options: Any) -> None:  # fmt: skip
        launcher = self._triton.get(triton_kernel)
        if launcher is None:
            launcher = TRITON.launcher(triton_kernel, clients=self.clients, options=self.options,
                                       session=self.session)  # fmt: skip
            launcher.progress = self.progress
            self._triton[triton_kernel] = launcher
        launcher[grid](*args, num_warps=num_warps, num_stages=num_stages)

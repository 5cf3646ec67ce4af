"""tilescope: run, check and understand tile-language GPU kernels on the CPU."""

__version__ = "0.1.0"

"""Bundled example kernels: small, readable Triton kernels that ``tilescope demo`` and the benchmarks run."""

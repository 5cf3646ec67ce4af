"""Bundled example kernels: small, readable Triton kernels run by ``tilescope demo`` and the benchmarks."""

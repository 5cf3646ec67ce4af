"""Bundled example kernels: small, readable Triton kernels that ``tilescope demo`` , the tutorials and the benchmarks run."""

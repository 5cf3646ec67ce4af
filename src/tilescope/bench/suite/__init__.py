"""The built-in suite: Llama-4/MoE-era kernels written in Triton, each registered with a torch baseline.

Importing this package registers every benchmark in it. Kernel modules import only Triton at module
level, so the blast-radius compiler can load them in an environment without torch.
"""

from tilescope.bench.suite import attention, matmul, moe, norms, swiglu  # noqa: F401 - registers

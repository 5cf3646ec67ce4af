"""Record what a real GPU's device queries and one compile return (run through ``device``).

``python tests/gpu/record_gpu.py`` writes ``$OUT/gpu_props.json``; the H200's is kept as
``tests/gpu/h200_recorded.json``, which ``tilescope.gpu.specs`` and its tests are checked against.
"""

import json
import os

import torch
import triton
import triton.language as tl
from triton.runtime import driver


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):  # fmt: skip
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(start, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def _plain(value):
    return value if isinstance(value, (int, float, str, bool)) else str(value)


def main() -> None:
    """Query, compile, write the JSON."""
    props = torch.cuda.get_device_properties(0)
    out = {
        "torch_props": {k: _plain(getattr(props, k)) for k in dir(props) if not k.startswith("_")},
        "name": torch.cuda.get_device_name(),
        "capability": torch.cuda.get_device_capability(),
        "mem_get_info": torch.cuda.mem_get_info(),
        "active_device": str(driver.active.get_active_torch_device()),
        "triton_props": driver.active.utils.get_device_properties(torch.cuda.current_device()),
    }
    target = driver.active.get_current_target()
    out["target"] = {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size}
    x = torch.randn(1823, 781, device="cuda")
    y = torch.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), 1823, 781, BLOCK_SIZE=1024, num_stages=4,
                                   num_warps=8, grid=(1,))  # fmt: skip
    kernel._init_handles()
    out["metadata"] = {k: str(v) for k, v in kernel.metadata._asdict().items()}
    out["n_regs"], out["n_spills"] = kernel.n_regs, kernel.n_spills
    out["kernel_attrs"] = [a for a in dir(kernel) if not a.startswith("__")]
    out["run_returns"] = type(softmax_kernel[(4,)](y, x, x.stride(0), y.stride(0), 1823, 781, BLOCK_SIZE=1024,
                                                   num_stages=4)).__name__  # fmt: skip
    out["triton_version"], out["torch_version"] = triton.__version__, torch.__version__
    with open(os.path.join(os.environ["OUT"], "gpu_props.json"), "w") as f:
        json.dump(out, f, indent=1, default=str)


if __name__ == "__main__":
    main()

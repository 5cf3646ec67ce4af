"""The roofline measured on this GPU: copy bandwidth and large-matmul rates, cached per GPU.

Datasheet peaks are not what a kernel can reach; the ceilings here are what the device did:
a large device-to-device copy (bytes read plus bytes written over time) and 8192^3 matrix products
through torch on random data, bf16 and (where torch offers it) fp8 e4m3. They are measured at first
use and cached in the user's cache directory keyed by GPU, driver and torch version.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tilescope.bench.paths import cache_dir

COPY_BYTES = 2 * 2**30
MATMUL_N = 8192
REPEATS = 10


@dataclass(frozen=True)
class Roofline:
    """Measured ceilings of one GPU: bytes/s for copies and FLOP/s per compute roof name."""

    key: str
    copy_bytes_per_s: float
    flops_per_s: dict[str, float]

    def floor_seconds(self, flops: float, nbytes: float, roof: str) -> float:
        """The least time ``flops`` and ``nbytes`` can take under these ceilings (the larger term)."""
        rate = self.flops_per_s.get(roof) or self.flops_per_s["bf16"]
        return max(flops / rate, nbytes / self.copy_bytes_per_s)


def _median_ms(fn: Any) -> float:
    import torch

    from tilescope.bench.timing import WARMUP_MS

    start = time.perf_counter()
    while time.perf_counter() - start < WARMUP_MS / 1e3:  # let the clocks settle, as the runner does
        fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def _copy_ms() -> float:
    import torch

    src = torch.randint(0, 255, (COPY_BYTES,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return _median_ms(lambda: dst.copy_(src))


def measure(key: str) -> Roofline:
    """Measure the ceilings on CUDA device 0 now."""
    import torch

    copy_ms = _copy_ms()
    n = MATMUL_N
    a = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((n, n), device="cuda", dtype=torch.bfloat16)
    rates = {"bf16": 2.0 * n**3 / (_median_ms(lambda: a @ b) / 1e3)}
    if hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"):
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).T.contiguous().T
        one = torch.ones((), device="cuda")
        try:
            fp8_ms = _median_ms(
                lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            )
            rates["fp8"] = 2.0 * n**3 / (fp8_ms / 1e3)
        except RuntimeError:
            pass  # no fp8 matrix unit (pre-Hopper): the fp8 roof falls back to bf16
    return Roofline(key=key, copy_bytes_per_s=2.0 * COPY_BYTES / (copy_ms / 1e3), flops_per_s=rates)


def roofline_key(env: dict[str, Any]) -> str:
    """The cache key of a GPU environment (GPU name, driver, torch version)."""
    return f"{env.get('gpu', '')}|{env.get('driver', '')}|{env.get('torch', '')}"


def load_or_measure(env: dict[str, Any], path: Path | None = None, remeasure: bool = False) -> Roofline:
    """The cached roofline for ``env``, measuring and caching it first if missing (or ``remeasure``)."""
    path = path or cache_dir() / "roofline.json"
    key = roofline_key(env)
    cache: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if key in cache and not remeasure:
        entry = cache[key]
        return Roofline(key=key, copy_bytes_per_s=entry["copy_bytes_per_s"], flops_per_s=entry["flops_per_s"])
    roof = measure(key)
    cache[key] = asdict(roof)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(cache, indent=1))
    tmp.replace(path)  # atomic: a concurrent reader sees the old file or the new one
    return roof

"""The GPUs tilescope can answer for on a CPU: what a device query on each returns.

A script written for a GPU asks its device things (name, capability, SM count, shared memory) and
sizes its launches by the answers. Under a modelled GPU those queries get one of these rows. The
H200 row was recorded on a real H200 (``torch.cuda.get_device_properties`` and Triton's
``driver.active.utils.get_device_properties``; the recording is ``tests/gpu/h200_recorded.json``);
the others come from the vendors' published specifications, in the same units torch reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import TilescopeError


@dataclass(frozen=True)
class GPUSpec:
    """One GPU's answers to device queries, in torch's units (bytes, kHz, bits)."""

    name: str  #: what ``torch.cuda.get_device_name()`` says
    backend: str  #: Triton's backend: "cuda" or "hip"
    arch: int | str  #: Triton's target arch: 90 for sm_90, "gfx942" for MI300X
    capability: tuple[int, int]
    multi_processor_count: int  #: SMs (NVIDIA) or compute units (AMD)
    total_memory: int
    warp_size: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int  #: what Triton calls ``max_shared_mem``
    shared_memory_per_multiprocessor: int
    regs_per_multiprocessor: int  #: what Triton calls ``max_num_regs``
    max_threads_per_block: int
    max_threads_per_multi_processor: int
    L2_cache_size: int
    clock_rate: int  #: SM clock, kHz
    memory_clock_rate: int  #: kHz
    memory_bus_width: int  #: bits

    @property
    def major(self) -> int:
        """Compute capability, major."""
        return self.capability[0]

    @property
    def minor(self) -> int:
        """Compute capability, minor."""
        return self.capability[1]

    def triton_properties(self) -> dict[str, int | str]:
        """What Triton's ``driver.active.utils.get_device_properties(device)`` returns on this GPU (the
        HIP backend's dict has a few more keys than CUDA's)."""
        props: dict[str, int | str] = {
            "max_shared_mem": self.shared_memory_per_block_optin,
            "max_num_regs": self.regs_per_multiprocessor,
            "multiprocessor_count": self.multi_processor_count,
            "warpSize": self.warp_size,
            "sm_clock_rate": self.clock_rate,
            "mem_clock_rate": self.memory_clock_rate,
            "mem_bus_width": self.memory_bus_width,
        }
        if self.backend == "hip":
            props.update(arch=str(self.arch), max_threads_per_sm=self.max_threads_per_multi_processor,
                         cooperativeLaunch=1)  # fmt: skip
        return props


SPECS: dict[str, GPUSpec] = {
    "h200": GPUSpec(  # recorded on an H200 (torch 2.11, Triton 3.6)
        name="NVIDIA H200", backend="cuda", arch=90, capability=(9, 0), multi_processor_count=132,
        total_memory=150_109_880_320, warp_size=32, shared_memory_per_block=49_152,
        shared_memory_per_block_optin=232_448, shared_memory_per_multiprocessor=233_472,
        regs_per_multiprocessor=65_536, max_threads_per_block=1024, max_threads_per_multi_processor=2048,
        L2_cache_size=62_914_560, clock_rate=1_980_000, memory_clock_rate=3_201_000, memory_bus_width=6016,
    ),
    "h100": GPUSpec(  # H100 SXM5 80 GB, from NVIDIA's specifications
        name="NVIDIA H100 80GB HBM3", backend="cuda", arch=90, capability=(9, 0), multi_processor_count=132,
        total_memory=85_520_809_984, warp_size=32, shared_memory_per_block=49_152,
        shared_memory_per_block_optin=232_448, shared_memory_per_multiprocessor=233_472,
        regs_per_multiprocessor=65_536, max_threads_per_block=1024, max_threads_per_multi_processor=2048,
        L2_cache_size=52_428_800, clock_rate=1_980_000, memory_clock_rate=2_619_000, memory_bus_width=5120,
    ),
    "a100": GPUSpec(  # A100 SXM4 80 GB, from NVIDIA's specifications
        name="NVIDIA A100-SXM4-80GB", backend="cuda", arch=80, capability=(8, 0), multi_processor_count=108,
        total_memory=85_899_345_920, warp_size=32, shared_memory_per_block=49_152,
        shared_memory_per_block_optin=166_912, shared_memory_per_multiprocessor=167_936,
        regs_per_multiprocessor=65_536, max_threads_per_block=1024, max_threads_per_multi_processor=2048,
        L2_cache_size=41_943_040, clock_rate=1_410_000, memory_clock_rate=1_593_000, memory_bus_width=5120,
    ),
    "mi300x": GPUSpec(  # AMD Instinct MI300X, from AMD's specifications (ROCm reports gfx942 as 9.4)
        name="AMD Instinct MI300X", backend="hip", arch="gfx942", capability=(9, 4),
        multi_processor_count=304,
        total_memory=206_141_652_992, warp_size=64, shared_memory_per_block=65_536,
        shared_memory_per_block_optin=65_536, shared_memory_per_multiprocessor=65_536,
        regs_per_multiprocessor=65_536, max_threads_per_block=1024, max_threads_per_multi_processor=2048,
        L2_cache_size=4_194_304, clock_rate=2_100_000, memory_clock_rate=1_300_000, memory_bus_width=8192,
    ),
}  # fmt: skip

#: the GPU answered for when none is named
DEFAULT = "h200"


def gpu_spec(name: str) -> GPUSpec:
    """The spec row for ``name`` (case-insensitive: ``"H200"``, ``"a100"``, ...)."""
    try:
        return SPECS[name.strip().lower()]
    except KeyError:
        known = ", ".join(SPECS)
        raise TilescopeError(f"unknown GPU {name!r} to model; known GPUs: {known} (or 'off')") from None


@dataclass(frozen=True)
class Roof:
    """One GPU's ceilings for a roofline: memory bandwidth and peak rate per compute roof.

    Roof names: ``fp64``, ``fp32`` (no tensor cores), ``tf32``, ``fp16``, ``bf16``, ``fp8`` (tensor
    cores, dense). ``measured`` names the figures that were measured on the GPU (the rest are the
    vendor's datasheet figures).
    """

    bandwidth: float  #: bytes/s (read + written) from device memory
    flops: dict[str, float]  #: FLOP/s by roof name
    measured: tuple[str, ...] = ()  #: "bandwidth" and roof names measured on the device
    source: str = ""

    def peak(self, roof: str) -> float:
        """FLOP/s of ``roof`` (the fp32 roof when this GPU has no such unit)."""
        return self.flops.get(roof) or self.flops["fp32"]


ROOFS: dict[str, Roof] = {
    "h200": Roof(  # measured with tilescope bench's roofline (benchmarks/RESULTS.md, issue 6)
        bandwidth=4.25e12,
        flops={"fp64": 67e12, "fp32": 67e12, "tf32": 494.7e12, "fp16": 989.5e12, "bf16": 780e12,
               "fp8": 1406e12},
        measured=("bandwidth", "bf16", "fp8"),
        source="H200: 2 GiB device copy, 8192^3 torch matmuls (bf16, fp8 _scaled_mm); the rest datasheet",
    ),
    "h100": Roof(
        bandwidth=3.35e12,
        flops={"fp64": 67e12, "fp32": 67e12, "tf32": 494.7e12, "fp16": 989.4e12, "bf16": 989.4e12,
               "fp8": 1978.9e12},
        source="NVIDIA H100 SXM5 datasheet (dense)",
    ),
    "a100": Roof(
        bandwidth=2.039e12,
        flops={"fp64": 19.5e12, "fp32": 19.5e12, "tf32": 156e12, "fp16": 312e12, "bf16": 312e12},
        source="NVIDIA A100 SXM4 80 GB datasheet (dense)",
    ),
    "mi300x": Roof(
        bandwidth=5.3e12,
        flops={"fp64": 81.7e12, "fp32": 163.4e12, "tf32": 653.7e12, "fp16": 1307.4e12, "bf16": 1307.4e12,
               "fp8": 2614.9e12},
        source="AMD Instinct MI300X datasheet (dense)",
    ),
}  # fmt: skip

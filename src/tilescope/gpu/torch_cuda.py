"""torch's CUDA surface answered on a CPU: CUDA tensors live in host memory, device queries answer as
the modelled GPU, synchronisation is a no-op.

Two of torch's own hooks do it. A :class:`~torch.overrides.TorchFunctionMode` sees every torch call
and method before it runs and turns a CUDA ``device`` (``"cuda"``, ``"cuda:0"``,
``torch.device("cuda")``) into the CPU, also in ``Tensor.to(...)``; ``Tensor.cuda()`` returns the
tensor itself, as it does on a GPU for a tensor already there; ``torch.Generator(device="cuda")`` is a
host generator. The functions of ``torch.cuda`` that
scripts call (``is_available``, ``get_device_properties``, ``synchronize``, ``Event``, ...) are
replaced while the model is installed and restored after. Tensors still say ``device(type='cpu')``:
a script that compares ``x.device`` against a CUDA device it made itself sees the difference.

Function modes are per thread: the thread that installs the model (``tilescope run``'s main
thread, the pytest session) has it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from .specs import GPUSpec

_CPU = torch.device("cpu")
_ABSENT = object()


def _is_cuda(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return False


def _host(value: Any) -> Any:
    return _CPU if _is_cuda(value) else value


class CudaOnHost(TorchFunctionMode):
    """Every CUDA device a torch call names becomes the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: D105 - torch's protocol
        kwargs = kwargs or {}
        if func is torch.Tensor.cuda:
            return args[0]
        if "device" in kwargs:
            kwargs = {**kwargs, "device": _host(kwargs["device"])}
        if func is torch.Tensor.to:
            args = tuple(_host(a) for a in args)
        return func(*args, **kwargs)


class HostGenerator(torch._C.Generator):
    """``torch.Generator(device="cuda")`` as a host generator (still a ``torch.Generator``)."""

    def __new__(cls, device: Any = "cpu") -> HostGenerator:
        return torch._C.Generator.__new__(cls, _host(device))

    def __init__(self, device: Any = "cpu"):
        pass


class Event:
    """``torch.cuda.Event`` on the host: ``elapsed_time`` is wall-clock milliseconds between records."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Any = None) -> None:
        """Note the time (work on the host is already finished when this runs)."""
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait(self, stream: Any = None) -> None:
        """Nothing to wait for."""

    def query(self) -> bool:
        """Always done."""
        return True

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this record to ``end``'s."""
        if self._time is None or end._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end._time - self._time) * 1e3


class Stream:
    """``torch.cuda.Stream`` on the host: work runs in order as it is issued."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any):
        self.device = _CPU
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def wait_stream(self, stream: Any) -> None:
        """Nothing to wait for."""

    def wait_event(self, event: Any) -> None:
        """Nothing to wait for."""

    def record_event(self, event: Event | None = None) -> Event:
        """An event recorded now."""
        event = event or Event()
        event.record()
        return event

    def query(self) -> bool:
        """Always done."""
        return True

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


_DEFAULT_STREAM = Stream()


def _properties(spec: GPUSpec) -> SimpleNamespace:
    fields = {name: getattr(spec, name) for name in (
        "name", "major", "minor", "total_memory", "multi_processor_count", "warp_size",
        "shared_memory_per_block", "shared_memory_per_block_optin", "shared_memory_per_multiprocessor",
        "regs_per_multiprocessor", "max_threads_per_block", "max_threads_per_multi_processor",
        "L2_cache_size", "clock_rate", "memory_clock_rate", "memory_bus_width")}  # fmt: skip
    return SimpleNamespace(**fields, gcnArchName=spec.arch if spec.backend == "hip" else spec.name,
                           is_integrated=0, is_multi_gpu_board=0)  # fmt: skip


def _returning(value: Any) -> Callable[..., Any]:
    """A new function that takes any arguments and returns ``value``."""
    return lambda *args, **kwargs: value


def answers(spec: GPUSpec) -> dict[str, Callable[..., Any] | type]:
    """The ``torch.cuda`` names replaced under the model, and what each becomes."""
    props = _properties(spec)
    # a function object of its own per name: torch._dynamo keys its trace rules on the objects behind
    # torch.cuda's names, and one object under two names with different rules stops it from importing
    return {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "init": _returning(None),
        "device_count": lambda: 1,
        "current_device": _returning(0),
        "set_device": _returning(None),
        "get_device_name": lambda device=None: spec.name,
        "get_device_capability": lambda device=None: spec.capability,
        "get_device_properties": lambda device=None: props,
        "get_arch_list": lambda: [f"sm_{spec.arch}" if spec.backend == "cuda" else str(spec.arch)],
        "is_bf16_supported": lambda including_emulation=True: spec.capability >= (8, 0),
        "synchronize": _returning(None),
        "empty_cache": _returning(None),
        "mem_get_info": lambda device=None: (spec.total_memory, spec.total_memory),
        "memory_allocated": _returning(0),
        "max_memory_allocated": _returning(0),
        "memory_reserved": _returning(0),
        "max_memory_reserved": _returning(0),
        "reset_peak_memory_stats": _returning(None),
        "Event": Event,
        "Stream": Stream,
        "current_stream": lambda device=None: _DEFAULT_STREAM,
        "default_stream": lambda device=None: _DEFAULT_STREAM,
        "stream": lambda stream=None: contextlib.nullcontext(stream),
        "set_stream": _returning(None),
        "device": lambda device=None: contextlib.nullcontext(),
    }


@contextlib.contextmanager
def cuda_on_host(spec: GPUSpec) -> Iterator[None]:
    """While inside: CUDA tensors are host tensors and ``torch.cuda`` answers as ``spec``."""
    replaced = [(torch.cuda, name, value) for name, value in answers(spec).items()]
    replaced.append((torch, "Generator", HostGenerator))
    if not hasattr(torch.cpu, "set_stream"):  # the device module of get_active_torch_device()'s device
        replaced.append((torch.cpu, "set_stream", lambda stream=None: None))
    saved = [(owner, name, getattr(owner, name, _ABSENT)) for owner, name, _ in replaced]
    for owner, name, value in replaced:
        setattr(owner, name, value)
    try:
        with CudaOnHost():
            yield
    finally:
        for owner, name, value in saved:
            if value is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, value)

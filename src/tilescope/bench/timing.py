"""Device timing: CUDA-graph replays over rotating input sets, timed with CUDA events.

One replay runs ``launches`` calls cycling through ``sets`` input sets (so the data a call reads is
not already in L2 from the call before), and each replay is timed with a pair of events; the sample
is replay time / launches. Capturing a graph takes the CPU launch overhead out of the number. A
function that cannot be captured (it synchronises with the host) is timed eagerly instead, and
the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

#: total bytes the rotating input sets should span, in multiples of the L2 size
L2_MULTIPLE = 4
#: most input sets kept at once
MAX_SETS = 64
#: target duration of one timed replay, milliseconds (long enough that event resolution is moot)
REPLAY_MS = 1.0
#: least device time spent running before timing starts, milliseconds. A power-hungry kernel on an
#: idle H200 runs ~15 % faster for its first ~50 ms, until the clocks settle (seen 2026-11-30), so
#: a count of warm-up calls is not enough: the warm-up is measured in time.
WARMUP_MS = 300.0


@dataclass(frozen=True)
class Timing:
    """Per-launch latency samples (milliseconds) and how they were taken."""

    samples_ms: tuple[float, ...]
    launches_per_replay: int
    sets: int
    graph: bool

    @property
    def median_ms(self) -> float:
        """Median per-launch latency."""
        return float(np.median(self.samples_ms))

    def quantile_ms(self, q: float) -> float:
        """The ``q`` quantile of the per-launch latency."""
        return float(np.quantile(self.samples_ms, q))


def sets_needed(set_bytes: int, l2_bytes: int) -> int:
    """How many input sets to rotate so that together they span ``L2_MULTIPLE`` times the L2."""
    if set_bytes <= 0:
        return 2
    return int(min(MAX_SETS, max(2, math.ceil(L2_MULTIPLE * l2_bytes / set_bytes))))


def tensor_bytes(inputs: dict[str, Any]) -> int:
    """Bytes held by the tensors among ``inputs``."""
    return sum(v.numel() * v.element_size() for v in inputs.values() if hasattr(v, "element_size"))


def time_calls(call: Callable[[int], Any], sets: int, reps: int, warmup: int = 3) -> Timing:
    """Time ``call(i)`` (i = input set index) ``reps`` times; graph-captured when possible."""
    import torch

    for _ in range(warmup):
        for i in range(sets):
            call(i)
    torch.cuda.synchronize()
    one = _eager_ms(call, sets, 1)
    launches = sets * max(1, math.ceil(REPLAY_MS / max(one, 1e-4) / sets))
    graph = torch.cuda.CUDAGraph()
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            call(0)  # a warm-up on the capture stream, as torch recommends
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            for j in range(launches):
                call(j % sets)
    except RuntimeError:
        torch.cuda.synchronize()
        _eager_ms(call, sets, max(launches, math.ceil(WARMUP_MS / max(one, 1e-3))))
        return Timing(tuple(_eager_samples(call, sets, launches, reps)), launches, sets, graph=False)
    for _ in range(max(warmup, math.ceil(WARMUP_MS / max(launches * one, 1e-3)))):
        graph.replay()
    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)
    ]
    for start, end in events:
        start.record()
        graph.replay()
        end.record()
    torch.cuda.synchronize()
    samples = tuple(s.elapsed_time(e) / launches for s, e in events)
    del graph
    return Timing(samples, launches, sets, graph=True)


def _eager_samples(call: Callable[[int], Any], sets: int, launches: int, reps: int) -> list[float]:
    return [_eager_ms(call, sets, launches) for _ in range(reps)]


def _eager_ms(call: Callable[[int], Any], sets: int, launches: int) -> float:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for j in range(launches):
        call(j % sets)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / launches

"""``tl.inline_asm_elementwise`` for the PTX that spin loops use: sleeps and timer reads.

PTX cannot run on the CPU, but the few instructions a spin-wait helper wraps have no effect on
memory and a meaning the engine can give them. The supported statements (one or more, separated by
``;``; ``//`` comments and ``{ }`` braces are ignored):

- ``nanosleep.u32 X``: a pause; in concurrent mode the program lets another one run;
- ``mov.u64 $k, %globaltimer`` (and ``mov.u32`` of ``%globaltimer_lo``/``%globaltimer_hi``): the
  host's monotonic clock in nanoseconds;
- ``mov.u64 $k, %clock64``, ``mov.u32 $k, %clock``: the same clock, standing in for cycles;
- ``mov.{u32,s32,b32,u64,s64,b64} $k, N``: an integer constant (the dummy result a sleep returns).

Outputs no statement sets are zero. Anything else is refused with an error naming the instruction.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine import dtypes
from ...engine.values import Value

_SLEEP = re.compile(r"nanosleep\.u32\s+(\$\d+|\d+)$")
_TIMER = re.compile(
    r"mov\.(u64|u32|b64|b32)\s+\$(\d+)\s*,\s*%(globaltimer|globaltimer_lo|globaltimer_hi|clock64|clock)$")
_CONST = re.compile(r"mov\.(?:u32|s32|b32|u64|s64|b64)\s+\$(\d+)\s*,\s*(-?\d+|0x[0-9a-fA-F]+)$")

SUPPORTED = ("nanosleep.u32", "mov of %globaltimer, %globaltimer_lo, %globaltimer_hi, %clock64, %clock",
             "mov of an integer constant")  # fmt: skip


@dataclass(repr=False, eq=False)
class AsmCall:
    """The results of one inline-asm call (Triton asks for them with ``get_result(i)``)."""

    results: list[Value]

    def get_result(self, index: int) -> Value:
        """Output ``index``."""
        return self.results[index]


def statements(asm: str) -> list[str]:
    """The assembly's statements, comments and braces removed, whitespace collapsed."""
    text = re.sub(r"//[^\n]*", "", asm).replace("{", ";").replace("}", ";")
    return [" ".join(s.split()) for s in text.split(";") if s.strip()]


def run(launch: Any, asm: str, result_types: list[Any], unsupported: Any) -> AsmCall:
    """Run ``asm`` for the batch; ``unsupported(what, detail)`` raises the error for anything else."""
    outputs: dict[int, Any] = {}
    for statement in statements(asm):
        if _SLEEP.match(statement):
            launch.yield_point(idle=False)
            continue
        timer = _TIMER.match(statement)
        if timer:
            now = time.monotonic_ns()
            part = timer.group(3)
            if part == "globaltimer_hi":
                now >>= 32
            elif timer.group(1).endswith("32"):
                now &= 0xFFFFFFFF
            outputs[int(timer.group(2))] = now
            continue
        const = _CONST.match(statement)
        if const:
            outputs[int(const.group(1))] = int(const.group(2), 0)
            continue
        unsupported(f"tl.inline_asm_elementwise(\"{statement}\")",
                    f"of inline PTX it runs only {'; '.join(SUPPORTED)}")
    results = []
    for index, ty in enumerate(result_types):
        element = dtypes.element(ty)
        shape = tuple(getattr(ty, "shape", ()))
        data = np.full((1, *shape), outputs.get(index, 0)).astype(element.storage)
        results.append(Value(data, element))
    return AsmCall(results)

"""Conformance cases: one Triton kernel, its random inputs, its float64 reference, its tolerance.

A `Case` is plain data. Whoever runs it chooses the launcher factory `wrap`: identity for real Triton
(a GPU, or the interpreter under ``TRITON_INTERPRET=1``), `tilescope.trace` for our engine. The same
case therefore checks three executors against one reference; `run_case` and `check_outputs` are the
one way to run and judge a case, shared by the tests and by ``benchmarks/gpu_golden.py``.

Tags used by the suite:

* ``exact``: every output is specified bit for bit (integer ops, casts, rand/randint, add/mul/fma,
  div_rn/sqrt_rn, data movement); the GPU golden comparison is bit-exact for these cases.
* ``bf16``, ``fp16``, ``fp8``, ``tf32``: low-precision numerics the case exercises.
* ``atomics``, ``spinlock``, ``rand``, ``descriptor``, ``autotune``, ``control``, ``libdevice``,
  ``print``, ``pointer_array``: what the kernel leans on (for selecting cases while debugging).
* ``slow``: too big for the default test run.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

Inputs = dict[str, Any]

# ml_dtypes storage for the low-precision types torch and Triton share; bits travel unchanged.
LOW_PRECISION: dict[str, Any] = {
    "bfloat16": ml_dtypes.bfloat16,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
}
_BITS = {1: np.uint8, 2: np.int16}


@dataclass(frozen=True)
class Case:
    """One conformance kernel with its inputs, launch, float64 reference and tolerances."""

    name: str
    make_inputs: Callable[[np.random.Generator], Inputs]
    launch: Callable[[Callable, dict[str, Any]], None]
    reference: Callable[[Inputs], dict[str, np.ndarray]]
    outputs: tuple[str, ...]
    tolerance: dict[str, tuple[float, float]]
    tags: frozenset[str] = frozenset()
    # Triton versions the case cannot run on, as (predicate on the version string, reason).
    skip_versions: tuple[tuple[Callable[[str], bool], str], ...] = field(default=())

    def skip_reason(self, triton_version: str) -> str | None:
        """Say why this case cannot run on `triton_version`, or None when it can."""
        for applies, reason in self.skip_versions:
            if applies(triton_version):
                return reason
        return None


CASES: dict[str, Case] = {}


def register(case: Case) -> Case:
    """Add `case` to the registry (names are unique) and return it."""
    if case.name in CASES:
        raise ValueError(f"conformance case {case.name!r} registered twice")
    missing = set(case.outputs) - set(case.tolerance)
    if missing:
        raise ValueError(f"case {case.name!r} has no tolerance for {sorted(missing)}")
    CASES[case.name] = case
    return case


def all_cases() -> dict[str, Case]:
    """Return every registered case by name, importing the case modules on first use."""
    from . import cases  # noqa: F401  (registers on import)

    return dict(sorted(CASES.items()))


def case_seed(name: str) -> int:
    """Seed for `name`: stable per case, or ``CONFORMANCE_SEED`` (an integer) for every case."""
    env = os.environ.get("CONFORMANCE_SEED")
    base = int(env) if env else 0
    return (zlib.crc32(name.encode()) ^ base) & 0x7FFFFFFF


def version_below(major: int, minor: int) -> Callable[[str], bool]:
    """Predicate for `Case.skip_versions`: true for Triton versions older than major.minor."""

    def applies(version: str) -> bool:
        parts = version.split(".")
        return (int(parts[0]), int(parts[1])) < (major, minor)

    return applies


# ----------------------------------------------------------------------------- arrays


def poison(shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
    """Array of `shape` filled with a value no kernel should leave behind (NaN, or 0x7f.. bytes)."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return np.full(shape, int.from_bytes(b"\x7f" * dt.itemsize, "little"), dtype=dt)
    return np.full(shape, np.nan, dtype=dt)


def is_poison(arr: np.ndarray) -> np.ndarray:
    """Boolean mask of the elements of `arr` that still hold the poison of `poison`."""
    if arr.dtype.kind in "iu":
        return arr == poison((), arr.dtype)
    with np.errstate(invalid="ignore"):
        return np.isnan(arr.astype(np.float64))


def _torch_dtype(name: str) -> Any:
    import torch

    return getattr(torch, name)


def to_torch(arr: np.ndarray, device: str = "cpu") -> Any:
    """Torch tensor with the same bits as `arr` (bf16/fp8 through a same-width integer view)."""
    import torch

    arr = np.ascontiguousarray(arr)
    name = arr.dtype.name
    if name in LOW_PRECISION:
        bits = torch.from_numpy(arr.view(_BITS[arr.dtype.itemsize]).copy())
        return bits.view(_torch_dtype(name)).to(device)
    return torch.from_numpy(arr.copy()).to(device)


def to_numpy(t: Any) -> np.ndarray:
    """NumPy array with the same bits as torch tensor `t` (bf16/fp8 as ml_dtypes)."""
    import torch

    t = t.detach().cpu().contiguous()
    name = str(t.dtype).removeprefix("torch.")
    if name in LOW_PRECISION:
        bits = t.view(torch.uint8 if t.element_size() == 1 else torch.int16).numpy()
        return bits.view(LOW_PRECISION[name]).copy()
    return t.numpy().copy()


# ----------------------------------------------------------------------------- running and judging


def make_tensors(inputs: Mapping[str, Any], device: str = "cpu") -> dict[str, Any]:
    """Kernel arguments from numpy inputs: arrays become tensors on `device`, scalars stay."""
    return {k: to_torch(v, device) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}


def launch_inputs(
    case: Case, wrap: Callable, inputs: Mapping[str, Any], device: str = "cpu"
) -> dict[str, np.ndarray]:
    """Run `case` through `wrap` on copies of `inputs`; return its outputs as numpy arrays."""
    tensors = make_tensors(inputs, device)
    case.launch(wrap, tensors)
    if device != "cpu":
        import torch

        torch.cuda.synchronize()
    return {k: to_numpy(tensors[k]) for k in case.outputs}


def run_case(
    case: Case, wrap: Callable, device: str = "cpu", seed: int | None = None
) -> tuple[Inputs, dict[str, np.ndarray]]:
    """Draw the case's inputs (seeded), launch it, and return (inputs, outputs) as numpy."""
    rng = np.random.default_rng(case_seed(case.name) if seed is None else seed)
    inputs = case.make_inputs(rng)
    return inputs, launch_inputs(case, wrap, inputs, device)


def compare(
    name: str, got: np.ndarray, want: np.ndarray, tol: tuple[float, float], what: str = "reference"
) -> None:
    """Assert `got` matches `want` within (rtol, atol); (0, 0) demands equal values (NaN == NaN)."""
    rtol, atol = tol
    want = np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError(f"{name}: shape {got.shape} != {what} shape {want.shape}")
    if want.dtype.kind in "iub" and got.dtype.kind in "iub":
        if rtol == 0 and atol == 0:
            bad = got.astype(np.int64) != want.astype(np.int64)
            if bad.any():
                idx = tuple(int(i) for i in np.argwhere(bad)[0])
                raise AssertionError(
                    f"{name}: {int(bad.sum())} of {bad.size} elements differ from {what}; first at {idx}: "
                    f"got {got[idx]!r}, want {want[idx]!r}"
                )
            return
    np.testing.assert_allclose(
        got.astype(np.float64),
        want.astype(np.float64),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        err_msg=f"output {name!r} vs {what}",
    )


def check_outputs(case: Case, inputs: Inputs, outputs: Mapping[str, np.ndarray]) -> None:
    """Assert every output matches the float64 reference and holds no poison the reference lacks."""
    expected = case.reference(inputs)
    for name in case.outputs:
        got, want = outputs[name], np.asarray(expected[name])
        left = is_poison(got) & ~is_poison(want.astype(got.dtype) if want.dtype.kind in "iu" else want)
        if left.any():
            idx = tuple(int(i) for i in np.argwhere(left)[0])
            raise AssertionError(f"{case.name}.{name}: {int(left.sum())} elements never written, first {idx}")
        compare(f"{case.name}.{name}", got, want, case.tolerance[name])


def golden_tolerance(case: Case, output: str) -> tuple[float, float]:
    """Tolerance between our engine and a GPU golden: bit-exact for ``exact`` cases, else twice
    the reference tolerance (each side may sit at the far edge of the reference's band)."""
    if "exact" in case.tags:
        return (0.0, 0.0)
    rtol, atol = case.tolerance[output]
    return (2 * rtol, 2 * atol)


# ----------------------------------------------------------------------------- golden fixtures


def save_golden(path: Any, case: Case, inputs: Mapping[str, Any], outputs: Mapping[str, np.ndarray]) -> None:
    """Write one case's inputs and outputs to a compressed .npz with no pickled objects.

    Arrays are stored as ``in.<name>`` / ``out.<name>``; bf16/fp8 travel as their raw uint bits.
    ``__meta__`` is a JSON string: each array's dtype name, and every scalar input's value."""
    import json

    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"case": case.name, "dtypes": {}, "scalars": {}}
    for role, values in (("in", inputs), ("out", outputs)):
        for name, value in values.items():
            if not isinstance(value, np.ndarray):
                meta["scalars"][name] = value
                continue
            key = f"{role}.{name}"
            meta["dtypes"][key] = value.dtype.name
            if value.dtype.name in LOW_PRECISION:
                value = value.view(np.uint8 if value.dtype.itemsize == 1 else np.uint16)
            arrays[key] = np.ascontiguousarray(value)
    arrays["__meta__"] = np.array(json.dumps(meta, sort_keys=True))
    np.savez_compressed(path, **arrays)


def load_golden(path: Any) -> tuple[Inputs, dict[str, np.ndarray], dict[str, Any]]:
    """Read a fixture written by `save_golden`: (inputs, outputs, meta), bits restored exactly."""
    import json

    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["__meta__"]))
        inputs: Inputs = dict(meta["scalars"])
        outputs: dict[str, np.ndarray] = {}
        for key, dtype_name in meta["dtypes"].items():
            arr = data[key]
            if dtype_name in LOW_PRECISION:
                arr = arr.view(LOW_PRECISION[dtype_name])
            role, name = key.split(".", 1)
            (inputs if role == "in" else outputs)[name] = arr
    return inputs, outputs, meta

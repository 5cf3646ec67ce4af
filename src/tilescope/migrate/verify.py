"""Equivalence check: original kernels (Triton 3.8, real block pointers) vs migrated ones, same inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import tilescope
from tilescope.migrate import runner
from tilescope.migrate.runner import load_module

#: relative tolerance per dtype kind; integer and boolean arrays must match exactly
TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-4, "float64": 1e-9}


@dataclass
class CaseResult:
    """One launch of one kernel module on one shape, original against migrated."""

    path: str
    shape: dict
    status: str  # "agree", "disagree", "error"
    detail: str = ""
    max_abs_diff: dict = field(default_factory=dict)


def migrated_engine() -> str:
    """Return ``"tilescope"`` when our engine is importable, else ``"interpreter"`` (Triton 3.9's)."""
    return "tilescope" if hasattr(tilescope, "trace") else "interpreter"


def compare(
    name: str, got: np.ndarray, want: np.ndarray, tol_dtype: str | None = None
) -> tuple[bool, float, str]:
    """Return (equal within the tolerance of ``tol_dtype`` or got's dtype, max abs difference, why not)."""
    if got.shape != want.shape or (tol_dtype is None and got.dtype != want.dtype):
        return False, float("inf"), f"{name}: {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if got.dtype.kind in "biu":
        bad = int((got != want).sum())
        return (
            bad == 0,
            float(np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0)),
            f"{name}: {bad} elements differ" if bad else "",
        )
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan_mismatch = int((np.isnan(g) != np.isnan(w)).sum())
    finite = ~np.isnan(g) & ~np.isnan(w)
    diff = np.abs(g - w)[finite]
    worst = float(diff.max(initial=0.0))
    tol = TOLERANCE.get(tol_dtype or got.dtype.name, 1e-4)
    scale = max(1.0, float(np.abs(w[finite]).max(initial=0.0)))
    bad = int((diff > tol * scale).sum()) + nan_mismatch
    why = (
        f"{name}: {bad} elements differ (max abs diff {worst:.3g}, {nan_mismatch} NaN mismatches)"
        if bad
        else ""
    )
    return bad == 0, worst, why


def _src_root() -> str:
    return str(Path(tilescope.__file__).resolve().parent.parent)


def run_job(python: Path | str, engine: str, cases: list[dict], job_path: Path, timeout: float) -> list[dict]:
    """Run ``cases`` through :mod:`tilescope.migrate.runner` under ``python``; return per-case results."""
    job_path.write_text(json.dumps({"engine": engine, "cases": cases}))
    # by path, not -m: importing the tilescope package would need its dependencies in the oracle env;
    # PYTHONPATH still lets migrated kernels import tilescope.compat
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_src_root(), os.environ.get("PYTHONPATH")]))
    )
    if engine == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run(
        [str(python), runner.__file__, str(job_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    result_path = job_path.with_suffix(".result.json")
    if done.returncode or not result_path.exists():
        raise RuntimeError(f"kernel runner under {python} failed:\n{done.stderr[-2000:]}")
    return json.loads(result_path.read_text())


def prepare(
    original: Path, migrated: Path, workdir: Path, seed: int
) -> tuple[list[dict], list[dict], list[str]]:
    """Write inputs for every case of ``original``; return (oracle cases, migrated cases, problems)."""
    module = load_module(original)
    missing = [
        name for name in ("cases", "make_inputs", "launch") if not callable(getattr(module, name, None))
    ]
    if missing:
        return [], [], [f"{original}: no launch spec ({', '.join(missing)} missing; see docs/migrate.md)"]
    oracle_cases, migrated_cases = [], []
    for index, shape in enumerate(module.cases()):
        rng = np.random.default_rng([seed, index])
        arrays = module.make_inputs(rng, **shape)
        stem = workdir / f"{original.stem}_{index}"
        np.savez(f"{stem}_in.npz", **arrays)
        for out, side, path in ((oracle_cases, "orig", original), (migrated_cases, "migr", migrated)):
            out.append(
                {
                    "module": str(path),
                    "shape": shape,
                    "inputs": f"{stem}_in.npz",
                    "outputs": f"{stem}_{side}.npz",
                }
            )
    return oracle_cases, migrated_cases, []


def verify(
    pairs: list[tuple[Path, Path]], oracle_python: Path, workdir: Path, seed: int = 0, timeout: float = 1800.0
) -> list[CaseResult]:
    """Run every (original, migrated) pair on the same random inputs and compare all arrays afterwards."""
    oracle_cases, migrated_cases, results = [], [], []
    for original, migrated in pairs:
        o, m, problems = prepare(original, migrated, workdir, seed)
        oracle_cases += o
        migrated_cases += m
        results += [CaseResult(str(original), {}, "error", p) for p in problems]
    if not oracle_cases:
        return results
    want = run_job(oracle_python, "interpreter", oracle_cases, workdir / "oracle_job.json", timeout)
    got = run_job(sys.executable, migrated_engine(), migrated_cases, workdir / "migrated_job.json", timeout)
    for case, w, g in zip(oracle_cases, want, got, strict=True):
        path = case["module"]
        if not w["ok"]:
            results.append(CaseResult(path, case["shape"], "error", f"original failed: {w['error']}"))
            continue
        if not g["ok"]:
            results.append(CaseResult(path, case["shape"], "disagree", f"migrated failed: {g['error']}"))
            continue
        migrated_out = case["outputs"].replace("_orig.npz", "_migr.npz")
        with np.load(case["outputs"]) as a, np.load(migrated_out) as b:
            checks = {name: compare(name, b[name], a[name]) for name in a.files}
        why = "; ".join(c[2] for c in checks.values() if not c[0])
        results.append(
            CaseResult(
                path,
                case["shape"],
                "disagree" if why else "agree",
                why,
                {name: c[1] for name, c in checks.items()},
            )
        )
    return results

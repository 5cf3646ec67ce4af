"""Max ulp distance from the H200 goldens (``tests/numerics``), per operation and dtype, for each
executor: tilescope before this work (an earlier engine's ``src``, ``--before SRC``, in its default
numerics), tilescope's "ideal" and "gpu" numerics (with ``gpu_layouts="compiled"`` for the
column-read reductions, whose layout only a compile tells), "gpu" with the special function unit's
recorded tables (``gpu_sfu="tables"``), and Triton's interpreter
(``TRITON_INTERPRET=1``). Prints a markdown table (the one in ``docs/numerics.md``).

    git archive 3861e50 src | tar -x -C /tmp/before
    .venv/bin/python benchmarks/numerics_table.py --before /tmp/before/src
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXECUTORS = ("before", "ideal", "gpu", "gpu_tables", "interpreter")
#: executor -> the column's heading where it is not the executor's name
HEADINGS = {"gpu_tables": 'gpu, `gpu_sfu="tables"`'}


def _worker(executor: str) -> dict:
    """{case: {output: max ulps}} for one executor (run in its own process)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from numerics import goldens, kernels
    from numerics.goldens import max_ulps

    triton_release = goldens.manifest()["triton"]
    out: dict = {}
    for name, case in kernels.CASES.items():
        inputs, gpu = goldens.load(name)
        tensors = {**inputs, **{k: v.clone().zero_() for k, v in gpu.items()}}
        try:
            if executor == "interpreter":
                case.launch(lambda k: k, tensors)
            else:
                import tilescope

                options = {"gpu_compiler": triton_release}
                if executor != "before":
                    options["numerics"] = executor.removesuffix("_tables")
                if executor == "gpu_tables":
                    options["gpu_sfu"] = "tables"
                if executor.startswith("gpu") and name.startswith("sum2dcols_"):  # only a compile tells it
                    options["gpu_layouts"] = "compiled"
                case.launch(lambda k, options=options: tilescope.trace(k, **options), tensors)
            out[name] = {o: max_ulps(tensors[o], gpu[o]) for o in case.outputs}
        except Exception:  # noqa: BLE001 - an executor that cannot run a case says so, per output
            out[name] = {o: "error" for o in case.outputs}
    return out


def _run(executor: str, before_src: str | None) -> dict:
    env = dict(os.environ)
    if executor == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    if executor == "before":
        env["PYTHONPATH"] = before_src
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", executor], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode:
        raise RuntimeError(f"{executor}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def _group(name: str, output: str) -> str:
    """The table row a case output belongs to: the operation and the dtype."""
    parts = name.split("_")
    if parts[0] in ("math", "libdevice"):
        return f"{output.removesuffix('_ptr')} {parts[1]}"
    if parts[0] == "dotacc":
        prec = parts[2] if parts[1] == "fp32" else ""
        split = ", max_num_imprecise_acc" if "imprecise" in name else ""
        return f"tl.dot {prec or parts[1]} onto a loaded acc{split}"
    if parts[0] == "sum2dcols":
        return f"tl.sum 2d, read by columns {parts[1]}"
    if parts[0] == "dot":
        prec = "tf32" if parts[1] == "fp32" and parts[2] == "tf32" else parts[2] if parts[1] == "fp32" else ""
        acc = "" if parts[3] in ("fp32", "int32") else f", {parts[3]} acc"
        k = "1 MMA" if parts[4] in ("k16", "k32") else "chained"
        return f"tl.dot {prec or parts[1]}{acc} ({k})"
    if parts[0] == "fma":
        return f"a*b+c ({'unfused' if parts[2] == 'unfused' else 'fused'}) {parts[1]}"
    if parts[0] == "dotsum":
        return f"tl.sum(x*y) {parts[1]}"
    return f"tl.sum {parts[0][-2:]} {parts[1]}"


def _cell(ulps: object) -> str:
    """A table cell: the max ulps, "NaN" where NaN met a number (``goldens.ulps`` counts 2**40)."""
    return "NaN" if isinstance(ulps, int) and ulps >= 1 << 40 else str(ulps)


def table(results: dict[str, dict]) -> str:
    """Markdown: one row per operation and dtype, the max ulps of each executor."""
    rows: dict[str, dict[str, object]] = {}
    for executor, cases in results.items():
        for name, outs in cases.items():
            for output, ulps in outs.items():
                cell = rows.setdefault(_group(name, output), {})
                prev = cell.get(executor, 0)
                cell[executor] = "error" if "error" in (ulps, prev) else max(prev, ulps)
    headings = [HEADINGS.get(e, e) for e in results]
    head = "| operation, dtype | " + " | ".join(headings) + " |\n|---|" + "---:|" * len(results) + "\n"
    body = "".join(
        f"| {key} | " + " | ".join(_cell(rows[key].get(e, "")) for e in results) + " |\n"
        for key in sorted(rows)
    )
    return head + body


def main(argv: list[str] | None = None) -> int:
    """Command line: print the table (or, with --worker, one executor's figures as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=EXECUTORS)
    parser.add_argument("--before", help="src folder of the engine to compare against (main's)")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args.worker)))
        return 0
    executors = [e for e in EXECUTORS if e != "before" or args.before]
    print(table({e: _run(e, args.before) for e in executors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

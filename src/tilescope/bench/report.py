"""Markdown tables for suite results, comparisons and history checks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tilescope.bench.compare import KernelVerdict
from tilescope.bench.stats import HistoryPoint


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _num(value: float | None, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def results_table(results: Sequence[dict[str, Any]]) -> str:
    """Suite results: one row per kernel and shape, the torch baseline's time and the speed-up beside it."""
    base = {
        (r["bench"], r["shape"]): r for r in results if r["variant"] == "baseline" and r["status"] == "ok"
    }
    rows = []
    for r in results:
        if r["variant"] != "triton":
            continue
        b = base.get((r["bench"], r["shape"]))
        ok = r["status"] == "ok"
        spread = f"{r['p10_ms']:.4f}–{r['p90_ms']:.4f}" if ok else ""
        rows.append(
            [
                r["bench"],
                r["shape"],
                r["status"] if ok else f"**{r['status']}**: {r['message']}",
                _num(r.get("median_ms"), ".4f"),
                spread,
                _num(r.get("tflops"), ".1f"),
                _num(r.get("gbps"), ".0f"),
                _num(None if r.get("roof_fraction") is None else 100 * r["roof_fraction"], ".0f"),
                _num(r.get("error"), ".1e"),
                _num(b and b["median_ms"], ".4f"),
                _num(b and ok and b["median_ms"] / r["median_ms"], ".2f"),
            ]
        )
    header = [
        "kernel",
        "shape",
        "status",
        "median ms",
        "p10–p90 ms",
        "TFLOP/s",
        "GB/s",
        "% roof",
        "rel err",
        "torch ms",
        "speed-up vs torch",
    ]
    return table(header, rows)


def verdict_table(items: Sequence[KernelVerdict], shapes: dict[tuple[str, int], str]) -> str:
    """One row per compared kernel: medians, Hodges-Lehmann ratio with CI, p-value, effect size, verdict."""
    rows = []
    for v in items:
        c = v.comparison
        rows.append(
            [
                v.bench,
                shapes.get((v.bench, v.case_index), str(v.case_index)),
                v.variant,
                f"{c.n_a}/{c.n_b}",
                f"{c.median_a:.4f}",
                f"{c.median_b:.4f}",
                f"{c.ratio:.4f}",
                f"[{c.ratio_lo:.4f}, {c.ratio_hi:.4f}]",
                f"{c.p_value:.2g}",
                f"{c.rank_biserial:+.2f}",
                c.verdict,
            ]
        )
    header = [
        "kernel",
        "shape",
        "variant",
        "procs A/B",
        "A ms",
        "B ms",
        "ratio B/A",
        "95% CI",
        "p (MWU)",
        "rank-biserial",
        "verdict",
    ]
    return table(header, rows)


def history_table(rows: Sequence[tuple[tuple[str, str, str, str], HistoryPoint, int]]) -> str:
    """The newest point of each series against its rolling baseline."""
    out = []
    for (bench, shape, variant, gpu), p, n in rows:
        out.append(
            [
                bench,
                shape,
                variant,
                gpu,
                n,
                f"{p.value:.4f}",
                _num(p.baseline, ".4f"),
                _num(p.score, "+.1f"),
                p.step or "–",
            ]
        )
    return table(
        ["kernel", "shape", "variant", "GPU", "runs", "newest ms", "baseline ms", "MAD score", "step"], out
    )

"""Regression statistics: a verdict needs a large ratio AND a significant rank test, never one number.

The unit of replication is a process: each sample is one process's median latency. Two samples are
compared with the two-sided Mann-Whitney U test (exact for small samples without ties); the size of
a change is the Hodges-Lehmann estimate of the latency ratio (the median of all pairwise ratios,
computed on logs) with the distribution-free confidence interval that inverts the same test. A
history check compares the newest value with a rolling median/MAD baseline of the previous ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as sps

#: default significance level of the two-sided rank test
ALPHA = 0.01
#: default ratio threshold: a verdict needs a change of at least this fraction
THRESHOLD = 0.02
#: default confidence of reported intervals
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Comparison:
    """Result of comparing B (head) against A (base) latencies; ratio > 1 means B is slower."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float
    ratio_lo: float
    ratio_hi: float
    p_value: float
    rank_biserial: float
    significant: bool
    verdict: str  # "regression", "improvement" or "no change"

    def as_dict(self) -> dict[str, float | int | bool | str]:
        """The comparison as plain data (for JSON and SQLite)."""
        return asdict(self)


def u_null_cdf(n: int, m: int) -> np.ndarray:
    """Exact P(U <= u) for u = 0..n*m under the null (no ties), by the standard recursion on counts."""
    # counts[j][u] for sample sizes (i, j); built up over i with a rolling array.
    counts = np.zeros((m + 1, n * m + 1), dtype=np.float64)
    counts[:, 0] = 1.0  # with i = 0 only U = 0 is possible
    for _ in range(n):
        new = np.zeros_like(counts)
        new[0, 0] = 1.0
        for j in range(1, m + 1):
            # the largest of the i + j values belongs to sample 1 (adds j to U) or to sample 2
            new[j, j:] += counts[j, : n * m + 1 - j]
            new[j] += new[j - 1]
        counts = new
    freq = counts[m]
    return np.cumsum(freq) / freq.sum()


def _ci_rank(n: int, m: int, confidence: float) -> int:
    """The rank k (1-based) such that [D_(k), D_(nm+1-k)] covers the shift with at least ``confidence``."""
    tail = (1.0 - confidence) / 2.0
    if n * m <= 40_000:
        cdf = u_null_cdf(n, m)
        # largest k with P(U <= k - 1) <= tail
        k = int(np.searchsorted(cdf, tail, side="right"))
    else:
        sd = math.sqrt(n * m * (n + m + 1) / 12.0)
        k = int(math.floor(n * m / 2.0 - sps.norm.ppf(1 - tail) * sd))
    return max(k, 1)


def hodges_lehmann(
    a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """Hodges-Lehmann latency ratio B/A and its confidence interval (lo, hi), from log differences.

    With too few samples for the requested confidence the interval is the full range of pairwise
    ratios, which then covers the truth with less than ``confidence``.
    """
    la = np.log(np.asarray(a, dtype=np.float64))
    lb = np.log(np.asarray(b, dtype=np.float64))
    diffs = np.sort((lb[None, :] - la[:, None]).ravel())
    k = min(_ci_rank(len(la), len(lb), confidence), (len(diffs) + 1) // 2)
    return (
        float(np.exp(np.median(diffs))),
        float(np.exp(diffs[k - 1])),
        float(np.exp(diffs[len(diffs) - k])),
    )


def compare(
    a: Sequence[float],
    b: Sequence[float],
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    confidence: float = CONFIDENCE,
) -> Comparison:
    """Compare head latencies ``b`` with base latencies ``a`` (one value per process).

    A regression is called when B is slower by at least ``threshold`` (Hodges-Lehmann ratio) and
    the two-sided Mann-Whitney test gives p < ``alpha``; an improvement symmetrically (ratio at most
    1 / (1 + threshold)); otherwise "no change".
    """
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"need at least 2 processes per side, got {len(a)} and {len(b)}")
    if min(min(a), min(b)) <= 0:
        raise ValueError("latencies must be positive")
    res = sps.mannwhitneyu(b, a, alternative="two-sided", method="auto")
    p = float(res.pvalue)
    u_b = float(res.statistic)  # pairs with b > a (ties count half)
    ratio, lo, hi = hodges_lehmann(a, b, confidence)
    significant = p < alpha
    if significant and ratio >= 1.0 + threshold:
        verdict = "regression"
    elif significant and ratio <= 1.0 / (1.0 + threshold):
        verdict = "improvement"
    else:
        verdict = "no change"
    return Comparison(
        n_a=len(a),
        n_b=len(b),
        median_a=float(np.median(a)),
        median_b=float(np.median(b)),
        ratio=ratio,
        ratio_lo=lo,
        ratio_hi=hi,
        p_value=p,
        rank_biserial=2.0 * u_b / (len(a) * len(b)) - 1.0,
        significant=significant,
        verdict=verdict,
    )


def clopper_pearson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Exact two-sided confidence interval for a binomial proportion of ``k`` successes in ``n``."""
    if n <= 0:
        raise ValueError("n must be positive")
    tail = (1.0 - confidence) / 2.0
    lo = 0.0 if k == 0 else float(sps.beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.ppf(1 - tail, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class RateEstimate:
    """How often a verdict was reached in repeated comparisons, with an exact binomial interval."""

    verdicts: int
    trials: int
    rate: float
    lo: float
    hi: float


def verdict_rate(
    pool_a: Sequence[float],
    pool_b: Sequence[float] | None,
    n: int,
    trials: int,
    *,
    want: tuple[str, ...],
    rng: np.random.Generator,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    confidence: float = CONFIDENCE,
) -> RateEstimate:
    """Rate of a verdict in ``want`` over ``trials`` comparisons of ``n`` vs ``n`` processes drawn from pools.

    With ``pool_b`` None this is an A/A study: each trial draws 2n distinct processes from
    ``pool_a`` and splits them at random. Otherwise each side is drawn without replacement from its
    own pool. Processes are the unit of resampling, so the interval is conditional on the pools: it
    says how the procedure behaves on these processes, and is only as general as the pools are large.
    """
    a_arr = np.asarray(pool_a, dtype=np.float64)
    b_arr = None if pool_b is None else np.asarray(pool_b, dtype=np.float64)
    need_a = 2 * n if b_arr is None else n
    if len(a_arr) < need_a or (b_arr is not None and len(b_arr) < n):
        raise ValueError(f"pools too small for {n} vs {n} processes")
    hits = 0
    for _ in range(trials):
        if b_arr is None:
            pick = rng.choice(len(a_arr), size=2 * n, replace=False)
            a, b = a_arr[pick[:n]], a_arr[pick[n:]]
        else:
            a = a_arr[rng.choice(len(a_arr), size=n, replace=False)]
            b = b_arr[rng.choice(len(b_arr), size=n, replace=False)]
        if compare(a, b, threshold=threshold, alpha=alpha, confidence=confidence).verdict in want:
            hits += 1
    lo, hi = clopper_pearson(hits, trials, confidence)
    return RateEstimate(verdicts=hits, trials=trials, rate=hits / trials, lo=lo, hi=hi)


@dataclass(frozen=True)
class HistoryPoint:
    """One value of a series judged against the rolling baseline of the values before it."""

    index: int
    value: float
    baseline: float | None
    mad: float | None
    score: float | None
    step: str  # "slower", "faster" or ""


def rolling_steps(
    values: Sequence[float],
    *,
    window: int = 10,
    k: float = 5.0,
    threshold: float = THRESHOLD,
    min_history: int = 5,
) -> list[HistoryPoint]:
    """Judge each value against the median/MAD of up to ``window`` values before it.

    A step is flagged when the value is more than ``k`` scaled MADs (1.4826 * MAD, the normal-
    consistent spread) from the baseline median AND differs from it by more than ``threshold`` as a
    ratio. Points with fewer than ``min_history`` values before them get no baseline.
    """
    out: list[HistoryPoint] = []
    for i, v in enumerate(values):
        prev = np.asarray(values[max(0, i - window) : i], dtype=np.float64)
        if len(prev) < min_history:
            out.append(HistoryPoint(i, float(v), None, None, None, ""))
            continue
        med = float(np.median(prev))
        mad = 1.4826 * float(np.median(np.abs(prev - med)))
        if mad > 0:
            score = (v - med) / mad
        else:
            score = 0.0 if v == med else math.copysign(math.inf, v - med)
        big = abs(v / med - 1.0) > threshold
        step = ""
        if big and abs(score) > k:
            step = "slower" if v > med else "faster"
        out.append(HistoryPoint(i, float(v), med, mad, float(score), step))
    return out

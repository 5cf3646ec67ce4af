"""The regression statistics on synthetic data with known answers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.bench import stats


def brute_force_cdf(n: int, m: int) -> np.ndarray:
    counts = np.zeros(n * m + 1)
    for first in itertools.combinations(range(n + m), n):
        rest = set(range(n + m)) - set(first)
        counts[sum(1 for x in first for y in rest if x > y)] += 1
    return np.cumsum(counts) / counts.sum()


@pytest.mark.parametrize(("n", "m"), [(1, 1), (2, 5), (3, 4), (4, 4), (5, 3)])
def test_exact_null_distribution_matches_enumeration(n: int, m: int) -> None:
    np.testing.assert_allclose(stats.u_null_cdf(n, m), brute_force_cdf(n, m))


def _lognormal(rng: np.random.Generator, n: int, shift: float, sd: float) -> np.ndarray:
    return np.exp(rng.normal(np.log(1.0 + shift), sd, n))


def test_false_alarm_rate_under_the_null_is_below_alpha() -> None:
    rng = np.random.default_rng(1)
    trials = 1500
    alarms = sum(
        stats.compare(_lognormal(rng, 8, 0, 0.01), _lognormal(rng, 8, 0, 0.01)).verdict != "no change"
        for _ in range(trials)
    )
    lo, hi = stats.clopper_pearson(alarms, trials)
    assert lo <= stats.ALPHA  # the test's level holds (exact test, exchangeable samples)
    assert alarms / trials <= stats.ALPHA


def test_rank_test_alone_fires_at_about_alpha_under_the_null() -> None:
    # With the ratio threshold set to 0 only the rank test decides: its two-sided size is <= alpha,
    # and for n = m = 8 the exact test's attainable size is close to it.
    rng = np.random.default_rng(2)
    trials = 3000
    alarms = sum(
        stats.compare(_lognormal(rng, 8, 0, 0.01), _lognormal(rng, 8, 0, 0.01), threshold=0.0).significant
        for _ in range(trials)
    )
    lo, _ = stats.clopper_pearson(alarms, trials, confidence=0.99)
    assert lo <= stats.ALPHA  # never more alarms than the level allows
    assert alarms > 0  # and not a vacuous test that never fires


def test_power_against_a_three_percent_slowdown() -> None:
    rng = np.random.default_rng(3)
    trials = 500
    hits = sum(
        stats.compare(_lognormal(rng, 8, 0, 0.005), _lognormal(rng, 8, 0.03, 0.005)).verdict == "regression"
        for _ in range(trials)
    )
    assert hits / trials >= 0.95


def test_small_significant_change_is_not_a_verdict() -> None:
    rng = np.random.default_rng(4)
    c = stats.compare(_lognormal(rng, 8, 0, 0.0005), _lognormal(rng, 8, 0.005, 0.0005))
    assert c.significant and c.verdict == "no change"  # 0.5 % is real but below the 2 % threshold


def test_improvement_is_reported_as_such() -> None:
    rng = np.random.default_rng(5)
    c = stats.compare(_lognormal(rng, 8, 0, 0.005), _lognormal(rng, 8, -0.1, 0.005))
    assert c.verdict == "improvement" and c.ratio < 0.95 and c.rank_biserial == -1.0


def test_hodges_lehmann_interval_covers_the_true_ratio() -> None:
    rng = np.random.default_rng(6)
    trials, covered = 400, 0
    for _ in range(trials):
        a, b = _lognormal(rng, 8, 0, 0.01), _lognormal(rng, 8, 0.05, 0.01)
        _, lo, hi = stats.hodges_lehmann(a, b, 0.95)
        covered += lo <= 1.05 <= hi
    assert covered / trials >= 0.92  # exact interval: nominal 95 %, allow binomial noise of 400 trials


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.5, 2.0), min_size=3, max_size=10),
    st.lists(st.floats(0.5, 2.0), min_size=3, max_size=10),
)
def test_swapping_sides_inverts_the_ratio_and_keeps_p(a: list[float], b: list[float]) -> None:
    ab, ba = stats.compare(a, b), stats.compare(b, a)
    assert ab.ratio == pytest.approx(1 / ba.ratio, rel=1e-9)
    assert ab.p_value == pytest.approx(ba.p_value, rel=1e-9)
    assert ab.rank_biserial == pytest.approx(-ba.rank_biserial, abs=1e-12)
    flip = {"regression": "improvement", "improvement": "regression", "no change": "no change"}
    assert flip[ab.verdict] == ba.verdict


def test_compare_rejects_too_few_processes() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        stats.compare([1.0], [1.0, 2.0])


def test_clopper_pearson_known_values() -> None:
    lo, hi = stats.clopper_pearson(0, 2000)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 2000), rel=1e-6)
    lo, hi = stats.clopper_pearson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10), rel=1e-6)


def test_verdict_rate_aa_and_power() -> None:
    rng = np.random.default_rng(7)
    pool_a = _lognormal(rng, 40, 0, 0.005)
    pool_b = _lognormal(rng, 20, 0.05, 0.005)
    aa = stats.verdict_rate(pool_a, None, 8, 300, want=("regression", "improvement"), rng=rng)
    power = stats.verdict_rate(pool_a, pool_b, 8, 300, want=("regression",), rng=rng)
    assert aa.rate <= 0.02 and aa.hi < 0.05
    assert power.rate == 1.0 and power.lo > 0.98
    with pytest.raises(ValueError, match="too small"):
        stats.verdict_rate(pool_a[:10], None, 8, 10, want=("regression",), rng=rng)


def test_rolling_steps_flags_a_step_and_not_noise() -> None:
    rng = np.random.default_rng(8)
    flat = list(1.0 + rng.normal(0, 0.002, 30))
    assert not any(p.step for p in stats.rolling_steps(flat))
    stepped = flat[:20] + [1.06] + flat[20:]
    judged = stats.rolling_steps(stepped)
    assert [p.index for p in judged if p.step] == [20]
    assert judged[20].step == "slower" and judged[20].baseline == pytest.approx(1.0, abs=0.01)
    assert judged[0].baseline is None  # too little history


def test_rolling_steps_with_zero_spread() -> None:
    judged = stats.rolling_steps([1.0] * 6 + [0.9])
    assert judged[-1].step == "faster" and judged[-1].score == float("-inf")

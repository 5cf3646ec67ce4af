"""What the timer decides without a GPU: how many input sets to rotate, and how samples summarise."""

from __future__ import annotations

from tilescope.bench.timing import MAX_SETS, Timing, sets_needed


def test_rotating_sets_span_four_l2s() -> None:
    l2 = 60 * 2**20
    assert sets_needed(384 * 2**20, l2) == 2  # a big matmul: two sets already exceed 4 x L2
    assert sets_needed(64 * 2**20, l2) == 4
    assert sets_needed(1024, l2) == MAX_SETS  # tiny inputs: capped
    assert sets_needed(0, l2) == 2


def test_timing_summary() -> None:
    t = Timing(samples_ms=(1.0, 2.0, 3.0, 4.0, 100.0), launches_per_replay=4, sets=2, graph=True)
    assert t.median_ms == 3.0
    assert t.quantile_ms(0.0) == 1.0 and t.quantile_ms(1.0) == 100.0

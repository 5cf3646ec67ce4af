"""A predicated loop splits into groups of similar trip count only where its predicted cost says so.

An attention-like loop (each iteration's cost grows with the programs it computes) over skewed
trip counts gains from running its groups apart; a loop of many small ops (its cost is per op,
whatever the batch) does not, and neither does a loop whose programs agree.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tilescope.engine import control
from tilescope.engine.errors import Divergence


def _plan(trips: np.ndarray) -> control.LoopPlan:
    return control.LoopPlan(trips.astype(np.int64), np.zeros_like(trips), np.ones_like(trips))


def _skewed(rng: np.random.Generator, programs: int) -> np.ndarray:
    return np.clip(rng.lognormal(1.0, 1.0, programs).astype(np.int64), 1, 64)


def test_data_heavy_loop_over_skewed_trips_splits_by_trip_count():
    trips = _skewed(np.random.default_rng(0), 512)
    launch = SimpleNamespace(pids=np.zeros((512, 3), np.int32))
    with pytest.raises(Divergence) as signal:  # 50 ops over 64k elements per program an iteration
        control.rebucket(launch, _plan(trips), None, None, iteration=(50, 512 * 65536), prefix=0.01)
    groups = signal.value.decisions
    for g in np.unique(groups):  # every group holds programs of similar trip count
        members = trips[groups == g]
        assert members.max() <= 2 * members.min() + 1


def test_loop_of_small_ops_and_uniform_loop_run_on_together():
    trips = _skewed(np.random.default_rng(1), 512)
    launch = SimpleNamespace(pids=np.zeros((512, 3), np.int32))
    # 50 ops over 16 elements per program: the cost is the ops', not the programs'; groups would
    # only repeat it
    control.rebucket(launch, _plan(trips), None, None, iteration=(50, 512 * 16), prefix=0.01)
    control.rebucket(launch, _plan(np.full(512, 9)), None, None, iteration=(50, 512 * 65536), prefix=0.0)

"""Helpers of the profiler tests: run a kernel under the profiler and find a site's entry."""

from __future__ import annotations

import pytest

import tilescope


def profile(kernel, grid, *args, wave=None, **meta):
    """Run ``kernel`` once under the profiler (values computed, so results can be checked) and
    return its launch entry."""
    options = {"wave": wave} if wave else {}
    launcher = tilescope.trace(kernel, clients="profiler", compute_outputs=True, **options)
    launcher[grid](*args, **meta)
    (report,) = launcher.reports
    return report.launches[-1], report


def site(launch: dict, kind: str, argument: str) -> dict:
    """The one site entry of ``kind`` on tensor ``argument``."""
    found = [s for s in launch["sites"] if s["kind"] == kind and s["argument"] == argument]
    assert len(found) == 1, [(s["kind"], s["argument"]) for s in launch["sites"]]
    return found[0]


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(20261202)

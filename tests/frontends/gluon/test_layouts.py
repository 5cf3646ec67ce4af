"""Gluon layouts as the engine's Blocked layouts, which order "gpu" numerics' sums."""

from __future__ import annotations

from triton.experimental.gluon import language as gl

from tilescope.engine.layout import Blocked
from tilescope.frontends.gluon.layouts import as_blocked


def test_a_blocked_layout_keeps_its_elements_lanes_and_warps_per_dimension():
    layout = gl.BlockedLayout([2, 1], [16, 2], [2, 2], [0, 1])
    assert as_blocked(layout) == Blocked((2, 1), (16, 2), (2, 2))


def test_a_slice_keeps_its_parents_other_dimensions():
    parent = gl.BlockedLayout([1, 4, 2], [2, 8, 2], [1, 2, 2], [2, 1, 0])
    assert as_blocked(gl.SliceLayout(1, parent)) == Blocked((1, 2), (2, 2), (1, 2))
    assert as_blocked(gl.SliceLayout(0, gl.SliceLayout(2, parent))) == Blocked((4,), (8,), (2,))


def test_a_layout_the_compiler_places_gives_none():
    assert as_blocked(gl.AutoLayout()) is None
    assert as_blocked(gl.SliceLayout(0, gl.AutoLayout())) is None

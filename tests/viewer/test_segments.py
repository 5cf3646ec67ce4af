"""Segments (runs of cells per op row and class) cover exactly the cells the lanes land on.

The reference maps every lane on its own (``Geometry.element_rc`` + ``cell_of``) and classes it
by the footprint rule written out here; the segments, whether a whole line was mapped at once
(consecutive elements of a row-major tensor) or lane by lane, must give the same (row, class,
cell) triples and the same lane count per (row, class).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilescope.viewer.geometry import base_geometry, finish, row_major_strides
from tilescope.viewer.rows import Lines
from tilescope.viewer.segments import MASKED, OUTSIDE, READ, WRITE, segments

ITEMSIZE = 4
# per kind code: 0 load (reads), 1 store (writes), 2 a kind that neither reads nor writes
READS = np.array([True, False, False, False])


def _rows(kinds: np.ndarray) -> SimpleNamespace:
    return SimpleNamespace(kind=kinds, writes=kinds == 1)


def _reference(rows, g, lines: Lines) -> tuple[set, Counter]:
    lanes = lines.lanes()
    r, c, inside = g.element_rc(lanes.delta)
    cell = g.cell_of(r, c)
    triples, counts = set(), Counter()
    for row, on, ok, k in zip(lanes.row, lanes.enabled, inside, cell, strict=True):
        kind = rows.kind[row]
        cls = (
            MASKED
            if not on
            else OUTSIDE
            if not ok
            else WRITE
            if kind == 1
            else READ
            if READS[kind]
            else MASKED
        )
        triples.add((int(row), cls, int(k)))
        counts[(int(row), cls)] += 1
    return triples, counts


def _covered(seg) -> tuple[set, Counter]:
    triples, counts = set(), Counter()
    for row, cls, start, cells, lanes in zip(seg.row, seg.cls, seg.start, seg.cells, seg.lanes, strict=True):
        assert cells >= 1 and lanes >= 1
        triples |= {(int(row), int(cls), int(k)) for k in range(start, start + cells)}
        counts[(int(row), int(cls))] += int(lanes)
    return triples, counts


@st.composite
def _case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=1, max_size=3)))
    g = base_geometry(shape, row_major_strides(shape), 0, ITEMSIZE)
    numel = g.numel
    margin = draw(st.booleans())
    g = finish(
        g, (-3, g.rows + 2, -2, g.cols + 1) if margin else None, draw(st.sampled_from([1 << 20, 64, 7]))
    )
    length = draw(st.integers(1, 48))
    step = draw(st.sampled_from([ITEMSIZE, ITEMSIZE, 2 * ITEMSIZE, -ITEMSIZE, 2]))
    n = draw(st.integers(1, 12))
    first = draw(st.lists(st.integers(-length - 3, numel + 3), min_size=n, max_size=n))
    odd = draw(st.lists(st.sampled_from([0, 0, 0, 1]), min_size=n, max_size=n))  # misaligned lines
    masks = draw(st.lists(st.sampled_from(["on", "off", "mixed"]), min_size=n, max_size=n))
    kinds = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    enabled = np.array(
        [np.full(length, m == "on") if m != "mixed" else rng.random(length) < 0.5 for m in masks]
    ).reshape(n, length)
    delta = np.array(first, np.int64) * ITEMSIZE + np.array(odd)
    return g, kinds, Lines(np.arange(n, dtype=np.int64), delta, enabled, step)


@settings(max_examples=300, deadline=None)
@given(_case())
def test_segments_cover_the_cells_every_lane_lands_on(case):
    g, kinds, lines = case
    rows = _rows(kinds)
    seg = segments(rows, g, lines, READS)
    assert _covered(seg) == _reference(rows, g, lines)


def test_a_tile_of_a_matrix_is_one_segment_per_row_it_spans():
    # the 16 x 32 tile of A at (row 48, column 32) in a GROUP_M matmul over A of 1024 x 64 float32
    g = base_geometry((1024, 64), (64, 1), 0, ITEMSIZE)
    rows_of_tile = np.arange(16, dtype=np.int64)
    delta = ((48 + rows_of_tile) * 64 + 32) * ITEMSIZE
    lines = Lines(np.zeros(16, np.int64), delta, np.ones((16, 32), bool), ITEMSIZE)
    seg = segments(_rows(np.array([0])), g, lines, READS)
    assert len(seg) == 16 and set(seg.cells) == {32} and set(seg.lanes) == {32}
    np.testing.assert_array_equal(np.sort(seg.start), (48 + rows_of_tile) * 64 + 32)
    # a vector add block of 256 crossing the wrap of a 1-D tensor: one segment per map row
    g = base_geometry((1000,), (1,), 0, ITEMSIZE)  # wrapped at 64
    lines = Lines(np.zeros(1, np.int64), np.array([100 * ITEMSIZE]), np.ones((1, 256), bool), ITEMSIZE)
    seg = segments(_rows(np.array([1])), g, lines, READS)
    assert list(seg.cls) == [WRITE] * 5 and list(seg.lanes) == [28, 64, 64, 64, 36]

"""Where a tensor's elements sit on its element map: a 2-D grid of cells, margins for lanes outside.

Every tensor is drawn as rows x columns: a 1-D tensor wrapped at a power-of-two width, a 2-D one
as it is, higher ranks with their leading dimensions flattened into rows (the page shows one slice
of ``shape[-2]`` rows at a time). Element coordinates come from a byte address the way the
sanitizer computes them (``ir.ViewInfo.coordinates``): dimensions peeled from the largest stride
down, the outermost absorbing overflow, so one row past the end of a matrix is row ``rows``.
Lanes that land outside the tensor get margin rows/columns ("ghost" cells), at most a quarter of
the tensor (at least 16) on each side; farther lanes are drawn on the outermost margin cell. Big
maps are downsampled to at most ``max_cells`` cells, each then covering ``factor_rows x
factor_cols`` elements.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

_MIN_MARGIN = 16
_MAX_WRAP = 4096
_BITS = re.compile(r"(\d+)")


def itemsize(dtype: str, nbytes: int = 0, shape: tuple[int, ...] = ()) -> int:
    """Bytes per element of a tensor of ``dtype`` (``fp32``, ``bf16``, ``fp8e4nv``, ``int1``, ...)."""
    name = dtype.removeprefix("pointer<").removesuffix(">")
    if name.startswith("fp8"):
        return 1
    match = _BITS.search(name)
    if match:
        return max(1, int(match.group(1)) // 8)
    numel = math.prod(shape) if shape else 1
    return max(1, nbytes // numel) if numel else 1


def wrap_width(numel: int) -> int:
    """Elements per row of a 1-D tensor's map: a power of two giving a picture about 4:1 wide."""
    if numel <= 1:
        return 1
    return int(min(_MAX_WRAP, 2 ** round(math.log2(math.sqrt(4 * numel)))))


@dataclass(frozen=True)
class Geometry:
    """A tensor argument's element map: logical grid, margins and downsampling (all in cells/elements)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    address: int  # byte address of element 0
    itemsize: int
    rows: int  # rows of elements (without margins)
    cols: int
    wrap: int  # 1-D: elements per row (0 otherwise)
    before_rows: int = 0  # margin rows above row 0
    after_rows: int = 0
    before_cols: int = 0
    after_cols: int = 0
    factor_rows: int = 1  # elements per cell, vertically
    factor_cols: int = 1

    @property
    def contiguous(self) -> bool:
        """Row-major without gaps: every aligned byte offset in ``[0, numel * itemsize)`` is an element."""
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides), strict=True):
            if n > 1 and s != step:
                return False
            step *= n
        return True

    @property
    def row_major(self) -> bool:
        """Strides exactly row-major (size-1 dimensions included): element ``e`` is the
        ``e``-th in row-major order, so consecutive elements of a map row are consecutive cells."""
        return bool(self.shape) and self.strides == row_major_strides(self.shape)

    @property
    def width(self) -> int:
        """Elements per map row: the wrap of a 1-D tensor, else the last dimension."""
        return self.wrap if len(self.shape) == 1 else self.cols

    @property
    def numel(self) -> int:
        """Elements of the tensor."""
        return math.prod(self.shape) if self.shape else 1

    @property
    def slice_rows(self) -> int:
        """Rows of one slice: ``shape[-2]`` for ranks >= 3, else every row."""
        return self.shape[-2] if len(self.shape) >= 3 else self.rows

    @property
    def total_rows(self) -> int:
        """Element rows including margins."""
        return self.before_rows + self.rows + self.after_rows

    @property
    def total_cols(self) -> int:
        """Element columns including margins."""
        return self.before_cols + self.cols + self.after_cols

    @property
    def cell_rows(self) -> int:
        """Rows of cells on the map."""
        return -(-self.total_rows // self.factor_rows)

    @property
    def cell_cols(self) -> int:
        """Columns of cells on the map."""
        return -(-self.total_cols // self.factor_cols)

    @property
    def cells(self) -> int:
        """Cells on the map."""
        return self.cell_rows * self.cell_cols

    def to_json(self) -> dict:
        """The geometry as the page needs it."""
        return {
            "shape": list(self.shape),
            "strides": list(self.strides),
            "itemsize": self.itemsize,
            "rows": self.rows,
            "cols": self.cols,
            "wrap": self.wrap,
            "slice_rows": self.slice_rows,
            "before_rows": self.before_rows,
            "after_rows": self.after_rows,
            "before_cols": self.before_cols,
            "after_cols": self.after_cols,
            "factor_rows": self.factor_rows,
            "factor_cols": self.factor_cols,
            "cell_rows": self.cell_rows,
            "cell_cols": self.cell_cols,
        }

    # -- mapping -----------------------------------------------------------------------------

    def element_rc(self, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row, column and "is an element of the tensor" of byte offsets ``delta`` from element 0."""
        delta = np.asarray(delta, dtype=np.int64)
        offset, remainder = floor_divmod(delta, self.itemsize)
        inside = remainder == 0
        if not self.shape:
            return offset, np.zeros_like(offset), inside & (offset == 0)
        order = sorted(range(len(self.shape)), key=lambda d: -abs(self.strides[d]))
        coords: list[np.ndarray] = [offset] * len(self.shape)
        rest = offset
        for d in order:
            coords[d], rest = floor_divmod(rest, self.strides[d] or 1)
        inside &= rest == 0
        for d, size in enumerate(self.shape):
            inside &= (coords[d] >= 0) & (coords[d] < size)
        if len(self.shape) == 1:
            row, col = floor_divmod(coords[0], self.wrap)
            return row, col, inside
        row = np.zeros_like(offset)
        for d in range(len(self.shape) - 1):
            row = row * self.shape[d] + coords[d]
        return row, coords[-1], inside

    def coords_rc(self, coords: list[int]) -> tuple[int, int]:
        """Row and column of element coordinates (which may lie outside the tensor)."""
        if not self.shape:
            return 0, 0
        if len(self.shape) == 1:
            return divmod(int(coords[0]), self.wrap)
        row = 0
        for d in range(len(self.shape) - 1):
            row = row * self.shape[d] + int(coords[d])
        return row, int(coords[-1])

    def cell_of(self, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Cell index of element rows/columns (clamped onto the outermost margin)."""
        r = np.clip(row, -self.before_rows, self.rows - 1 + self.after_rows) + self.before_rows
        c = np.clip(col, -self.before_cols, self.cols - 1 + self.after_cols) + self.before_cols
        return (r // self.factor_rows) * self.cell_cols + c // self.factor_cols

    def inside_cells(self) -> np.ndarray:
        """Per cell: does it hold at least one element of the tensor."""
        rows = np.arange(self.cell_rows) * self.factor_rows - self.before_rows
        cols = np.arange(self.cell_cols) * self.factor_cols - self.before_cols
        # a cell holds an element when some element row and column of it are in range
        row_hit = (rows + self.factor_rows > 0) & (rows < self.rows)
        col_hit = (cols + self.factor_cols > 0) & (cols < self.cols)
        inside = row_hit[:, None] & col_hit[None, :]
        if len(self.shape) == 1:
            first = np.maximum(rows, 0)[:, None] * self.wrap + np.maximum(cols, 0)[None, :]
            inside &= first < self.numel
        return inside.reshape(-1)


def floor_divmod(x: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.divmod(x, d)`` (floor semantics), by shifts when ``d`` is a power of two (far faster on int64)."""
    if d > 0 and d & (d - 1) == 0:
        shift = d.bit_length() - 1
        return x >> shift, x & (d - 1)
    return np.divmod(x, d)


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides (in elements) of a row-major tensor of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(1, n)
    return tuple(reversed(strides))


def base_geometry(shape: tuple[int, ...], strides: tuple[int, ...], address: int, size: int) -> Geometry:
    """The map of a tensor without margins or downsampling."""
    if not shape:
        return Geometry((), (), address, size, 1, 1, 0)
    if len(shape) == 1:
        wrap = wrap_width(shape[0])
        return Geometry(shape, strides, address, size, max(1, -(-shape[0] // wrap)), wrap, wrap)
    return Geometry(shape, strides, address, size, max(1, math.prod(shape[:-1])), max(1, shape[-1]), 0)


def finish(geometry: Geometry, extent: tuple[int, int, int, int] | None, max_cells: int) -> Geometry:
    """``geometry`` with margins covering ``extent`` (min/max row, min/max column of every lane),
    each capped, and downsampled to at most ``max_cells`` cells."""
    g = geometry
    if extent is not None:
        r_lo, r_hi, c_lo, c_hi = extent
        cap_r, cap_c = max(_MIN_MARGIN, g.rows // 4), max(_MIN_MARGIN, g.cols // 4)
        g = Geometry(
            g.shape,
            g.strides,
            g.address,
            g.itemsize,
            g.rows,
            g.cols,
            g.wrap,
            before_rows=int(min(cap_r, max(0, -r_lo))),
            after_rows=int(min(cap_r, max(0, r_hi - (g.rows - 1)))),
            before_cols=int(min(cap_c, max(0, -c_lo))),
            after_cols=int(min(cap_c, max(0, c_hi - (g.cols - 1)))),
        )
    rows, cols = g.total_rows, g.total_cols
    if rows * cols <= max_cells:
        return g
    # powers of two, so that cells line up with the power-of-two tiles kernels use
    fr = min(_pow2_at_least(math.sqrt(rows * cols / max_cells)), _pow2_at_least(rows))
    cell_rows = -(-rows // fr)
    fc = _pow2_at_least(cols / max(1, max_cells // cell_rows))
    return Geometry(
        g.shape,
        g.strides,
        g.address,
        g.itemsize,
        g.rows,
        g.cols,
        g.wrap,
        g.before_rows,
        g.after_rows,
        g.before_cols,
        g.after_cols,
        fr,
        fc,
    )


def _pow2_at_least(x: float) -> int:
    return 1 if x <= 1 else 2 ** math.ceil(math.log2(x))

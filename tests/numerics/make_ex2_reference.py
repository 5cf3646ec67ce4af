"""Write ``sm90_ex2_ref.npy``: the float64 reference ``ex2``'s two-bit codes are differences from.

``2**f`` for the 2**23 fractions ``f = q / 2**23`` of [0, 1), and ``2**-f``, is the product of two
table entries, ``2**(±(q >> 11) / 4096) * 2**(±(q & 2047) / 2**23)``: 4096 + 2048 float64 per sign,
computed here in decimal arithmetic at 40 digits (the same on every machine, unlike a libm's or
NumPy's SIMD ``exp2``) and rounded once to float64. One IEEE multiply of two entries is within about
1.5 float64 ulps of ``2**±f``; rounded to float32 it is the correctly rounded value at every grid
point, which this script checks: no grid point's ``2**±f`` lies within 8 float64 ulps of a float32
rounding boundary (the midpoint between two float32), so any reference that close rounds alike, and
the codes recorded against ``np.exp2`` (``record_sfu.py``) hold unchanged.

    .venv/bin/python tests/numerics/make_ex2_reference.py
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np

OUT = Path(__file__).parents[2] / "src/tilescope/engine/data/sm90_ex2_ref.npy"
#: the smallest distance, in float64 ulps, from a grid point's 2**±f to a float32 rounding boundary
MARGIN = 8


def powers(count: int, scale: int, sign: int) -> np.ndarray:
    """``2**(sign * i / scale)`` for i < ``count``, each correctly rounded to float64."""
    with localcontext() as ctx:
        ctx.prec = 40
        ln2 = Decimal(2).ln()
        return np.array([float((Decimal(sign * i) / scale * ln2).exp()) for i in range(count)])


def reference() -> np.ndarray:
    """(2, 6144) float64: for x >= 0 then x < 0, the 4096 high-part powers then the 2048 low ones."""
    return np.stack([np.concatenate([powers(4096, 4096, s), powers(2048, 2**23, s)]) for s in (1, -1)])


def margin(values: np.ndarray) -> float:
    """The smallest distance, in float64 ulps, from ``values`` (positive float64) to the midpoint
    between the two float32 around each."""
    low = values.astype(np.float32)
    low = np.where(low > values, np.nextafter(low, np.float32(0)), low).astype(np.float64)
    high = np.nextafter(low.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    return float(np.min(np.abs(values - (low + high) / 2) / np.spacing(values)))


def main() -> None:
    ref = reference()
    q = np.arange(2**23)
    for sign, table in zip((1, -1), ref, strict=True):
        values = table[q >> 11] * table[4096 + (q & 2047)]
        assert margin(values) > MARGIN, f"a grid point of 2**({sign}f) too close to a rounding boundary"
        same = values.astype(np.float32) == np.exp2(sign * q * 2.0**-23).astype(np.float32)
        print(f"2**({sign:+d}f): margin {margin(values):.0f} ulps, rounds as np.exp2 at {same.mean():.0%}")
    np.save(OUT, ref)


if __name__ == "__main__":
    main()

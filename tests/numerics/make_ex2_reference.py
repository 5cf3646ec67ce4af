"""Write ``sm90_ex2_ref.npy``: the float64 reference ``ex2``'s two-bit codes are differences from.

``2**f`` for the 2**23 fractions ``f = q / 2**23`` of [0, 1), and ``2**-f``, is
``2**(±(q >> 11) / 4096)`` (4096 float64 per sign) times a cubic in ``t = ±(q & 2047) / 2**23``
(``|t| < 2**-12``: ``1 + t (ln 2 + t (ln(2)**2 / 2 + t ln(2)**3 / 6))``, its truncation under 0.2
float64 ulps), :func:`tilescope.engine.sfu.power_of_two`. The entries and coefficients are computed
here in decimal arithmetic at 40 digits (the same on every machine, unlike a libm's or NumPy's SIMD
``exp2``) and rounded once to float64; the evaluation is a fixed sequence of IEEE float64 operations,
so it too is the same everywhere, within about 3 float64 ulps of ``2**±f``. Rounded to float32 it is
the correctly rounded value at every grid point, which this script checks: no grid point's value
lies within 8 float64 ulps of a float32 rounding boundary (the midpoint between two float32), so any
reference that close rounds alike, and the codes recorded against ``np.exp2`` (``record_sfu.py``)
hold unchanged (it checks that the rounding is ``np.exp2``'s at every grid point).

    .venv/bin/python tests/numerics/make_ex2_reference.py
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np

from tilescope.engine.sfu import power_of_two

OUT = Path(__file__).parents[2] / "src/tilescope/engine/data/sm90_ex2_ref.npy"
#: the smallest distance, in float64 ulps, from a grid point's 2**±f to a float32 rounding boundary
MARGIN = 8


def reference() -> np.ndarray:
    """(2, 4099) float64: for x >= 0 then x < 0, ``2**(±i / 4096)`` for i < 4096, then the cubic's
    coefficients ``ln(2)**k / k!`` (k = 1, 2, 3), each correctly rounded to float64."""
    with localcontext() as ctx:
        ctx.prec = 40
        ln2 = Decimal(2).ln()
        coefficients = [float(ln2), float(ln2**2 / 2), float(ln2**3 / 6)]
        return np.array([[float((Decimal(s * i) / 4096 * ln2).exp()) for i in range(4096)] + coefficients
                         for s in (1, -1)])  # fmt: skip


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
    for neg, sign in enumerate((1, -1)):
        values = power_of_two(ref, q, np.full(q.shape, neg))
        assert margin(values) > MARGIN, f"a grid point of 2**({sign}f) too close to a rounding boundary"
        same = values.astype(np.float32) == np.exp2(sign * q * 2.0**-23).astype(np.float32)
        assert same.all(), (
            f"2**({sign}f) rounds unlike np.exp2 (the codes' reference) at {np.flatnonzero(~same)[:5]}"
        )
        print(f"2**({sign:+d}f): margin {margin(values):.0f} float64 ulps, rounds as np.exp2 everywhere")
    np.save(OUT, ref)


if __name__ == "__main__":
    main()

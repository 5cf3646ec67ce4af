"""Write the stored first-use checks of the engine's C kernels (``engine/data/*_check/*.npy``): each
check's inputs and the NumPy path's bits on them (:func:`tilescope.engine.fma_chain.check_expected`,
:func:`tilescope.engine.sfu.check_expected`, :func:`tilescope.engine.tree_sum.check_expected`),
and torch's FMA check (:func:`tilescope.engine.numerics.hardware_fma_check_expected`). Run after
changing a check's inputs or a NumPy path; tests/engine/test_check_data.py says when it is due.

    .venv/bin/python tests/engine/make_check_data.py
"""

from __future__ import annotations

import numpy as np

from tilescope.engine import clib, fma_chain, sfu, tree_sum
from tilescope.engine import numerics as nx

#: C kernel -> what its stored check holds
CHECKS = {
    "fma_chain": fma_chain.check_expected,
    "sfu": sfu.check_expected,
    "tree_sum": tree_sum.check_expected,
    "hardware_fma": nx.hardware_fma_check_expected,
}


def main() -> None:
    """Write every stored check."""
    for name, expected in CHECKS.items():
        folder = clib.check_dir(name)
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.npy"):
            old.unlink()
        for key, value in expected().items():
            np.save(folder / f"{key}.npy", value)
        print(folder)


if __name__ == "__main__":
    main()

"""tilescope's sanitizer on the corpus, finding for finding against the brute-force oracle.

For each case, ``tilescope.trace(case.kernel, clients="sanitizer", bounds="view")[grid](*args)`` must
report exactly the oracle's findings: kind, kernel, file, line, column, argument, program ids, lane
count, first bad element and loop iteration (see ``sanitizer_oracle`` for how each is defined). A
clean case must give no finding. A sanitizer that crashes fails the case; nothing here skips.

Conventions the sanitizer must share with the oracle (details in ``sanitizer_oracle``'s docstring):
bounds are the view's extent (``bounds="view"``: past it is out of bounds even inside its storage,
where the default policy warns); a pointer is checked against the argument it was derived from; an
``int32 overflow`` is reported at the access whose address used a wrapped signed value, and those
lanes are not bounds-checked; a ``descriptor rule`` is reported at the ``tl.make_tensor_descriptor``
call, once per program (``lanes`` counts programs, ``first_element`` is None), and accesses through
that descriptor report nothing more; a ``device assert`` has argument None and the failing lane's
block index as ``first_element`` (``()`` for a scalar); asserts fire only for kernels declared
``@triton.jit(debug=True)`` (every assert kernel in the corpus is); ``iteration`` is the 0-based
index of the innermost running loop; findings are one per (site, kind, argument).

The oracle runs inside the test rather than from a committed JSON file: the whole corpus takes a few
seconds under it, and a recorded file could drift from the corpus or the interpreter without anyone
noticing. Each side gets its own fresh arguments from the same seed, since both write to them.
"""

import inspect
import os

import numpy as np
import pytest
from sanitizer_corpus import all_cases
from sanitizer_oracle import run_oracle

CASES = all_cases()
BY_NAME = {c.name: c for c in CASES}


def _engine_findings(case) -> list[dict]:
    import tilescope

    args, kwargs = case.make_args(np.random.default_rng(0))
    launcher = tilescope.trace(case.kernel, clients="sanitizer", bounds="view")
    launcher[case.grid](*args, **kwargs)
    out = []
    for report in launcher.reports:
        for f in report.findings:
            assert f.kernel == case.kernel.fn.__name__, f
            assert os.path.realpath(f.file) == os.path.realpath(inspect.getsourcefile(case.kernel.fn)), f
            first = f.details.get("first_element")
            out.append(
                {
                    "kind": f.kind,
                    "argument": f.details.get("argument"),
                    "line": f.line,
                    "column": f.column,
                    "program_ids": sorted(tuple(p) for p in f.program_ids),
                    "lanes": f.details.get("lanes"),
                    "first_element": None if first is None else tuple(first),
                    "iteration": f.details.get("iteration"),
                }
            )
    return sorted(out, key=_key)


def _key(f: dict):
    return (f["line"], f["column"], f["kind"], str(f["argument"]))


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_sanitizer_matches_oracle(name):
    case = BY_NAME[name]
    expected = sorted(run_oracle(case), key=_key)
    got = _engine_findings(case)
    if not case.buggy:
        assert got == [], got
    assert got == expected

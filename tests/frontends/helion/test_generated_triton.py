"""A Helion kernel and the Triton code Helion generated for it give the same op stream, up to site mapping.

Each kernel runs twice on the same fresh inputs, with a recording client: once through
``tilescope.trace(helion_kernel)(*args)``, and once as plain Triton, by loading the generated
module (``bound.to_triton_code(config)`` for the config the frontend picks) from a file of its own
and launching its ``@triton.jit`` kernel with ``tilescope.trace(kernel)[grid](...)``, with the grid
and arguments the generated host function computes, and no line map installed. Every record is
compared per program: kind, shapes, dtypes, operands, attributes, enabled and in-bounds lanes, byte
offsets from the argument bases, values and loop iterations; the direct run's sites (generated
lines) are taken through Helion's line map and must land on the Helion run's sites.
"""

from __future__ import annotations

import importlib.util
import linecache
from collections import Counter

import numpy as np
import pytest

helion = pytest.importorskip("helion")

import torch  # noqa: E402

import tilescope  # noqa: E402
from tests.core.op_stream import Recorder, fault_rows, per_program  # noqa: E402
from tests.frontends.helion import buggy  # noqa: E402
from tests.frontends.helion import kernels as hk  # noqa: E402
from tests.frontends.helion.test_helion import randn  # noqa: E402
from tilescope.engine import sites  # noqa: E402
from tilescope.frontends.helion.linemap import line_map  # noqa: E402
from tilescope.ir import Need  # noqa: E402

# per_program's row: [kind, site, program id, dtype, itemsize, shape, argument, loops, ...]
SITE, LOOPS = 1, 7


def helion_stream(kernel, args):
    """The op stream of ``tilescope.trace(kernel)(*args)``, with the launcher (for its config)."""
    recorder = Recorder((Need.VALUES,))
    launcher = tilescope.trace(kernel, clients=[recorder])
    out = launcher(*args)
    return recorder, out, launcher


def load_generated(kernel, args, config, directory):
    """Helion's generated Triton module for ``config``, loaded from a file of its own under ``directory``."""
    code = kernel.bind(args).to_triton_code(config)
    path = directory / f"generated_{kernel.fn.__name__}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(path)


def triton_stream(module, name, args, monkeypatch):
    """Run the generated host function ``name``, sending its launches to tilescope as plain Triton."""
    recorder = Recorder((Need.VALUES,))

    def launch(triton_kernel, grid, *kernel_args, **meta):
        tilescope.trace(triton_kernel, clients=[recorder])[grid](*kernel_args, **meta)

    with monkeypatch.context() as patch:
        patch.setattr(sites, "LINE_MAPS", [])  # sites stay at the generated lines
        out = getattr(module, name)(*args, _launcher=launch)
    return recorder, out


def statement_column(filename: str, line: int) -> int:
    """Where a mapped site's column points: the first non-blank column of the user's line (1-based)."""
    text = linecache.getline(filename, line)
    return len(text) - len(text.lstrip()) + 1


def rows(recorder, mapping=None, generated=None):
    """Per-program rows of a recording's ops and faults; with ``mapping``, the sites in file ``generated``
    (and loop lines) go through the line map."""
    ops, faults = Counter(), Counter()
    for record in recorder.ops:
        for row in per_program(record, True, recorder):
            if mapping is not None:
                row = list(row)
                if row[SITE] is not None and row[SITE][0] == generated:
                    row[SITE] = (*mapping[row[SITE][1]], statement_column(*mapping[row[SITE][1]]))
                row[LOOPS] = tuple((mapping[line][1], i) for line, i in row[LOOPS])
                row = tuple(row)
            ops[row] += 1
    for fault in recorder.faults:
        for kind, line, *rest in fault_rows(fault, recorder):
            faults[(kind, mapping[line][1] if mapping is not None else line, *rest)] += 1
    return ops, faults


def difference(a: tuple[Counter, Counter], b: tuple[Counter, Counter]) -> str:
    """A readable account of the op and fault rows only one side has (empty when the streams agree)."""
    lines = []
    for what, x, y in (("op", a[0], b[0]), ("fault", a[1], b[1])):
        only_a, only_b = x - y, y - x
        if only_a or only_b:
            counts = sum(only_a.values()), sum(only_b.values())
            lines.append(f"{what} rows: {counts[0]} only through Helion, {counts[1]} only direct")
            lines += [f"  helion: {row[:8]}" for row in list(only_a)[:3]]
            lines += [f"  direct: {row[:8]}" for row in list(only_b)[:3]]
    return "\n".join(lines)


def both_streams(kernel, args, tmp_path, monkeypatch, perturb=None):
    """(Helion rows, direct rows mapped through the line map, Helion output, direct output)."""
    helion_rec, helion_out, launcher = helion_stream(kernel, copies(args))
    config = launcher.chosen_config(kernel.bind(args))
    module, path = load_generated(kernel, args, config, tmp_path)
    direct_args = copies(args)
    if perturb is not None:
        perturb(direct_args)
    direct_rec, direct_out = triton_stream(module, kernel.fn.__name__, direct_args, monkeypatch)
    mapping = line_map(path)
    assert mapping, "Helion's generated code carries no line map"
    return rows(helion_rec), rows(direct_rec, mapping, path), helion_out, direct_out


def copies(args):
    """Fresh copies of a call's tensor arguments (others as they are)."""
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


CASES = {
    "add": (hk.add, lambda: (randn(1000), randn(1000))),
    "softmax": (hk.softmax, lambda: (randn(100, 64) * 3,)),
    "matmul": (hk.matmul, lambda: (randn(64, 96), randn(96, 80))),
    "rms_norm": (hk.rms_norm, lambda: (randn(50, 64), randn(64))),
    "layer_norm": (hk.layer_norm, lambda: (randn(50, 64), randn(64), randn(64))),
    "row_sum": (hk.row_sum, lambda: (randn(100, 70),)),
    "gelu_tanh": (hk.gelu_tanh, lambda: (randn(1000) * 2,)),
    "transpose_scale": (hk.transpose_scale, lambda: (randn(40, 64), 2.0)),
    "out_of_bounds_load": (buggy.shifted_add_one, lambda: (randn(1000),)),
    "out_of_bounds_gather": (
        buggy.embedding,
        lambda: (torch.tensor([1, 5, 70, 3] * 8, dtype=torch.int64), randn(50, 16)),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_helion_and_its_generated_triton_give_the_same_op_stream(name, tmp_path, monkeypatch):
    torch.manual_seed(17)
    kernel, make_args = CASES[name]
    through_helion, direct, helion_out, direct_out = both_streams(kernel, make_args(), tmp_path, monkeypatch)
    assert through_helion[0], "no records"
    assert {row[SITE][0] for row in through_helion[0]} == {kernel.fn.__code__.co_filename}
    assert bool(through_helion[1]) == (kernel.fn.__module__ == buggy.__name__)  # the buggy ones fault
    diff = difference(through_helion, direct)
    assert not diff, diff
    np.testing.assert_array_equal(helion_out.numpy(), direct_out.numpy())


def test_the_comparison_sees_one_changed_input_element(tmp_path, monkeypatch):
    def change_one(args):
        args[0][317] += 1.0

    torch.manual_seed(18)
    through_helion, direct, *_ = both_streams(hk.add, (randn(1000), randn(1000)), tmp_path, monkeypatch,
                                              perturb=change_one)  # fmt: skip
    assert difference(through_helion, direct)
    changed = (through_helion[0] - direct[0]).keys()
    assert {row[0] for row in changed} == {"load", "store"}  # x's load and out's store, program 1 only
    assert {row[2] for row in changed} == {(1, 0, 0)}


def test_the_comparison_sees_unmapped_sites(tmp_path, monkeypatch):
    torch.manual_seed(19)
    args = (randn(100, 70),)
    helion_rec, *_ = helion_stream(hk.row_sum, copies(args))
    module, path = load_generated(hk.row_sum, args, hk.row_sum.configs[0], tmp_path)
    direct_rec, _ = triton_stream(module, "row_sum", args, monkeypatch)
    assert difference(rows(helion_rec), rows(direct_rec))  # generated lines are not Helion's lines
    assert not difference(rows(helion_rec), rows(direct_rec, line_map(path), path))

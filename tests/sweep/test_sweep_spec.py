"""Sweep specs: what a valid one expands to, and the errors an invalid one gets (naming the key)."""

from __future__ import annotations

import textwrap

import pytest

from tilescope.sweep.spec import Cell, SpecError, load, parse

SPEC = textwrap.dedent("""
    [sweep]
    name = "norms"
    clients = ["sanitizer"]
    timeout = 30
    memory = "1.5GiB"
    path = ["kernels"]

    [[kernel]]
    name = "softmax"
    case = "softmax_cases:case"
    shapes = [{ product = [[1, 3], [16, 100]] }, [2, 5000]]
    dtypes = ["float32", "float16"]

    [[kernel]]
    case = "faulty_cases:sums_case"
    shapes = [[4, 64]]
    constexprs = { splits = [1, 4] }
    configs = [{ num_warps = 4 }, { num_warps = 8, BLOCK = 64 }]
""")


def test_a_spec_expands_to_the_product_of_each_kernels_axes(tmp_path):
    path = tmp_path / "norms.toml"
    path.write_text(SPEC)
    spec = load(path)
    assert (spec.name, spec.clients, spec.timeout, spec.memory) == ("norms", ["sanitizer"], 30.0, 3 * 2**29)
    assert spec.path == (str(tmp_path / "kernels"),)
    cells = spec.cells()
    softmax = [c for c in cells if c.kernel == "softmax"]
    assert [c.params["shape"] for c in softmax[::2]] == [(1, 16), (1, 100), (3, 16), (3, 100), (2, 5000)]
    assert [c.params["dtype"] for c in softmax[:2]] == ["float32", "float16"]
    sums = [c for c in cells if c.kernel == "sums_case"]
    assert len(cells) == 10 + 4 and len(sums) == 4
    assert sums[3].params == {"shape": (4, 64), "splits": 4, "config": {"num_warps": 8, "BLOCK": 64}}
    assert sums[3].id == "sums_case[shape=4x64, splits=4, config=num_warps:8,BLOCK:64]"
    assert len({c.key for c in cells}) == len(cells)


def test_a_cell_survives_its_trip_through_json():
    cell = load_cells()[3]
    again = Cell.from_dict(cell.to_dict())
    assert again == cell and again.key == cell.key and again.id == cell.id


def load_cells() -> list[Cell]:
    import tomllib

    return parse(tomllib.loads(SPEC)).cells()


@pytest.mark.parametrize("change, message", [
    ('[sweep]\ntimeouts = 3', "unknown key 'timeouts' in [sweep]; allowed: name, clients, timeout"),
    ('[sweep]\ntimeout = -1', "sweep.timeout: seconds per cell, a number >= 0 (0: no limit; got -1)"),
    ('[sweep]\nmemory = "lots"', 'sweep.memory: bytes a cell may add, an integer or a size such as "2GiB"'),
    ('[sweep]\nclients = ["sanitiser"]', "sweep.clients: unknown client sanitiser; known clients:"),
    ('[sweep]\nclients = "sanitizer,tracer"', "sweep.clients: the tracer writes one trace folder per"),
    ('[sweep]\noptions = { modes = "serial" }', "sweep.options: unknown option modes; options are"),
    ('[[kernel]]\ncase = "softmax_cases.case"\nshapes = [[1]]',
     'kernel[0].case: must be "module.path:function" (got \'softmax_cases.case\')'),
    ('[[kernel]]\ncase = "m:f"\ndtypes = ["fp16"]',
     "kernel 'f'.dtypes: unknown dtype fp16; allowed: bool, int8"),
    ('[[kernel]]\ncase = "m:f"\nshapes = [[2, -1]]',
     "kernel 'f'.shapes: sizes are a non-empty list of integers"),
    ('[[kernel]]\ncase = "m:f"\nshapes = [{ dims = [[1]] }]',
     "kernel 'f'.shapes: a table in shapes takes one key, product (got ['dims'])"),
    ('[[kernel]]\ncase = "m:f"\nconstexprs = { BLOCK = [] }', "kernel 'f'.constexprs.BLOCK: an empty axis"),
    ('[[kernel]]\ncase = "m:f"\nconstexprs = { dtype = [1] }', "'dtype' is the name of a built-in axis"),
    ('[[kernel]]\ncase = "m:f"\nconfigs = [1, 2]', "kernel 'f'.configs: must be a list of tables"),
    ('[[kernel]]\ncase = "m:f"', "kernel 'f': no axes; give shapes, dtypes, constexprs or configs"),
    ('[[kernel]]\ncase = "m:f"\nshapes = [[1]]\nblock = 3', "unknown key 'block' in [[kernel]] #1; allowed"),
    ('[[kernel]]\ncase = "m:f"\nshapes = [[1]]\n[[kernel]]\ncase = "n:f"\nshapes = [[1]]',
     "kernel name f used twice; give each [[kernel]] its own name ="),
    ('[sweep]\nname = "x"', "no [[kernel]] tables; a sweep needs at least one"),
    ('[[kernel]]\ncase = "m:f"\nshapes = [[1]]\n[extra]', "unknown key 'extra' in the top level"),
])
def test_a_bad_spec_is_refused_with_the_key_and_what_is_allowed(tmp_path, change, message):
    path = tmp_path / "bad.toml"
    path.write_text(change)
    with pytest.raises(SpecError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_a_spec_that_is_not_toml_or_not_there_says_so(tmp_path):
    with pytest.raises(SpecError, match="no such sweep spec"):
        load(tmp_path / "missing.toml")
    (tmp_path / "broken.toml").write_text("[sweep\n")
    with pytest.raises(SpecError, match="broken.toml: not valid TOML"):
        load(tmp_path / "broken.toml")

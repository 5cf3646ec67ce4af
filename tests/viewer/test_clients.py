"""The real race detector's and profiler's findings, from ``tilescope run``, drawn where they
happen: both sides of a race at their own elements, programs and lines; an uncoalesced access's
sectors and a softmax's masked-off lanes at their elements; nothing on the kernels that are clean."""

from __future__ import annotations

from tilescope.viewer import TraceModel

from . import clients_script as script


def _findings(trace, number: int) -> tuple[dict, dict[str, int]]:
    meta, _ = TraceModel(trace).launch_container(number)
    return meta, {t["name"]: k for k, t in enumerate(meta["tensors"])}


def test_both_sides_of_each_race_are_marked_at_their_element_program_and_line(clients_trace):
    meta, tensor = _findings(clients_trace, 1)
    races = {f["details"]["element_text"]: f for f in meta["findings"] if f["client"] == "racecheck"}
    store = script.line_of(script.smooth, "tl.store")
    left, right = script.line_of(script.smooth, "offs - 1"), script.line_of(script.smooth, "offs + 1")
    # x and y are one tensor: program 0 stores y[63], which program 1 reads as its left neighbour x[63];
    # program 0 reads x[64] as its right neighbour, which program 1 stores as y[64]
    assert set(races) == {"y_ptr[63]", "y_ptr[64]"}
    shares = {t["name"]: t["shares"] for t in meta["tensors"]}
    assert shares == {"x_ptr": ["y_ptr"], "y_ptr": ["x_ptr"]}  # the page says the two are one tensor
    marks = [(m["tensor"], m["element"], m["program"]) for m in races["y_ptr[63]"]["marks"]]
    assert marks == [(tensor["y_ptr"], [63], 0), (tensor["x_ptr"], [63], 1)]
    assert races["y_ptr[63]"]["lines"] == sorted({store, left})
    marks = [(m["tensor"], m["element"], m["program"]) for m in races["y_ptr[64]"]["marks"]]
    assert marks == [(tensor["x_ptr"], [64], 0), (tensor["y_ptr"], [64], 1)]
    assert races["y_ptr[64]"]["lines"] == sorted({store, right})
    labels = [m["label"] for m in races["y_ptr[64]"]["marks"]]
    assert labels == [f"load by program (0), line {right}", f"store by program (1), line {store}"]
    for n in (2, 3):  # the column gather and the softmax have no races
        meta, _ = _findings(clients_trace, n)
        assert not [f for f in meta["findings"] if f["client"] == "racecheck"]


def test_an_uncoalesced_column_read_marks_one_element_per_sector_at_its_line(clients_trace):
    meta, tensor = _findings(clients_trace, 2)
    assert all(t["shares"] == [] for t in meta["tensors"])
    (f,) = [f for f in meta["findings"] if f["kind"] == "uncoalesced access"]
    assert f["line"] == script.line_of(script.gather_columns_kernel, "tl.load") and f["lines"] == [f["line"]]
    assert "strided by 64 bytes" in f["message"]  # a row of 16 float32
    # the first request of program (0, 0): 32 lanes down column 0, each alone in its sector
    assert [(m["tensor"], m["element"], m["program"]) for m in f["marks"]] == [
        (tensor["x_ptr"], [r, 0], 0) for r in range(8)
    ]
    assert f["marks"][0]["label"] == "sector 1/32 of request 1: 4 of 32 bytes used"
    assert not [g for g in meta["findings"] if g["kind"] == "masked lanes"]  # 512 rows: no tail


def test_the_softmax_masked_lanes_are_marked_at_the_first_program_s_idle_lanes(clients_trace):
    meta, tensor = _findings(clients_trace, 3)
    found = {(f["kind"], f["line"]): f for f in meta["findings"]}
    load = script.line_of(script.softmax_kernel, "tl.load")
    store = script.line_of(script.softmax_kernel, "tl.store")
    assert set(found) == {("masked lanes", load), ("masked lanes", store)}
    # row 0's lanes 80..127 are off; the row is contiguous, so they point at row 1's first elements
    marks = found[("masked lanes", load)]["marks"]
    assert [(m["tensor"], m["element"], m["program"]) for m in marks] == [
        (tensor["input_ptr"], [1, c], 0) for c in range(8)
    ]
    assert marks[0]["label"] == "masked-off lane (48 of 128 in program)"
    assert {m["tensor"] for m in found[("masked lanes", store)]["marks"]} == {tensor["output_ptr"]}

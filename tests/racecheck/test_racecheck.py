"""racecheck's reports (text, JSON, SARIF, merging), its options, and the engine support it needs:
seeded schedules, addresses-only runs, ``tl.atomic_poll`` and the sleep/timer subset of inline PTX."""

import json

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import tilescope
from tilescope.clients.racecheck import RaceCheck, RaceReport


@triton.jit
def shift_right(x_ptr, n, BLOCK: tl.constexpr):
    # in place: each program writes the block its right neighbour reads
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs + 1, x, mask=offs + 1 < n)


@triton.jit
def wait_then_copy(x_ptr, y_ptr, flag_ptr, BLOCK: tl.constexpr, SLEEP: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == 0:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1.0)
        tl.atomic_xchg(flag_ptr, 1, sem="release")
    else:
        while tl.atomic_load(flag_ptr, sem="acquire") == 0:
            if SLEEP:
                tl.inline_asm_elementwise("nanosleep.u32 $1; mov.u32 $0, 0;", "=r,r",
                                          [tl.full((), 100, tl.int32)], dtype=tl.int32, is_pure=False, pack=1)
        tl.store(x_ptr + BLOCK + offs, tl.load(y_ptr + offs) * 2.0)


@triton.jit
def poll_with_timeout(flag_ptr, out_ptr, TIMEOUT: tl.constexpr):
    start = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False,
                                      pack=1)
    if TIMEOUT:
        seen = tl.atomic_poll(flag_ptr + tl.arange(0, 4), 1, timeout_ns=1000)
    else:
        seen = tl.atomic_poll(flag_ptr + tl.arange(0, 4), 1)
    end = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False,
                                    pack=1)
    tl.store(out_ptr + tl.arange(0, 4), seen.to(tl.int32) + (end >= start).to(tl.int32) * 10)


@triton.jit
def reads_lane_id(out_ptr):
    lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr, lane)


def _race_report(**options) -> RaceReport:
    client = RaceCheck()
    x = torch.arange(64, dtype=torch.float32)
    tilescope.trace(shift_right, clients=[client], **options)[(4,)](x, 64, BLOCK=16)
    return client.report()


def test_finding_names_both_sides_the_element_and_a_hint():
    (f,) = _race_report().findings
    d = f.details
    line = shift_right.fn.__code__.co_firstlineno
    assert (f.kind, d["race"]) == ("data race", "read-after-write")
    assert (f.line, d["first"]["line"]) == (line + 4, line + 5)
    assert d["first"]["program"] == [0, 0, 0] and d["second"]["program"] == [1, 0, 0]
    assert d["element_text"] == "x_ptr[16]" and d["lanes"] == 3 and d["programs"] == 4
    assert d["first"]["access"] == "store" and d["second"]["atomic"] is False
    text = _race_report().to_text()
    assert "read-after-write on x_ptr[16] with the store of program (0)" in text
    assert "split the kernel into two launches" in text


def test_report_round_trips_through_json_and_merges_across_processes():
    a, b = _race_report(), _race_report(mode="serial")
    back = RaceReport.from_json(a.to_json())
    assert isinstance(back, RaceReport) and back.findings == a.findings
    (merged,) = RaceReport.merge([a, b]).findings
    assert merged.details["lanes"] == 6 and merged.details["kinds"] == {"read-after-write": 6}
    assert "6 conflicting accesses" in merged.message


def test_sarif_has_the_rule_the_result_and_the_other_side(tmp_path):
    path = tmp_path / "races.sarif"
    client = RaceCheck(sarif_path=path)
    tilescope.trace(shift_right, clients=[client])[(4,)](torch.ones(64), 64, BLOCK=16)
    log = json.loads(path.read_text())
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "tilescope-racecheck"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["data-race", "shared-memory-race"]
    (result,) = run["results"]
    line = shift_right.fn.__code__.co_firstlineno
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == line + 4
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == line + 5


def test_addresses_only_run_gives_the_same_verdict_and_moves_no_data():
    x = torch.arange(64, dtype=torch.float32)
    client = RaceCheck()
    tilescope.trace(shift_right, clients=[client], compute_outputs=False)[(4,)](x, 64, BLOCK=16)
    assert [f.line for f in client.report().findings] == [f.line for f in _race_report().findings]
    np.testing.assert_array_equal(x.numpy(), np.arange(64))


def test_schedules_run_every_seed_and_findings_name_one():
    report = _race_report(schedules=3)
    (f,) = report.findings
    assert report.summary["launches"] == 3
    assert f.details["seed"] in (0, 1, 2) and f.details["mode"] == "concurrent"


def test_grid_beyond_max_programs_says_happens_before_was_not_tracked():
    client = RaceCheck(max_programs=2)
    tilescope.trace(shift_right, clients=[client])[(4,)](torch.ones(64), 64, BLOCK=16)
    assert "happens-before was not tracked" in client.report().to_text()


@pytest.mark.parametrize("sleep", [False, True])
def test_flag_wait_with_and_without_nanosleep_completes_clean(sleep):
    x, y, flag = torch.rand(32) + 0.5, torch.zeros(16), torch.zeros(1, dtype=torch.int32)
    before = x.clone()
    client = RaceCheck()
    tilescope.trace(wait_then_copy, clients=[client])[(2,)](x, y, flag, BLOCK=16, SLEEP=sleep)
    assert client.report().findings == []
    np.testing.assert_allclose(x[16:].numpy(), (before[:16].double().numpy() + 1.0) * 2.0, rtol=1e-6)


def test_atomic_poll_returns_when_flags_are_set_and_times_out_otherwise():
    out = torch.zeros(4, dtype=torch.int32)
    tilescope.trace(poll_with_timeout)[(1,)](torch.ones(4, dtype=torch.int32), out, TIMEOUT=False)
    assert out.tolist() == [11, 11, 11, 11]  # every poll saw its flag; the timer does not run backwards
    flags = torch.tensor([1, 0, 1, 0], dtype=torch.int32)
    tilescope.trace(poll_with_timeout, spin_limit=5)[(1,)](flags, out, TIMEOUT=True)
    assert out.tolist() == [11, 10, 11, 10]
    with pytest.raises(tilescope.KernelError, match="deadlock"):
        tilescope.trace(poll_with_timeout, spin_limit=5)[(1,)](flags, out, TIMEOUT=False)


def test_other_inline_ptx_is_refused_naming_the_instruction_and_line():
    with pytest.raises(tilescope.UnsupportedOpError) as info:
        tilescope.trace(reads_lane_id)[(1,)](torch.zeros(1, dtype=torch.int32))
    message = str(info.value)
    assert "mov.u32 $0, %laneid" in message and "nanosleep.u32" in message
    assert info.value.site.line == reads_lane_id.fn.__code__.co_firstlineno + 2


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def test_each_side_names_its_own_argument_element_and_program():
    # x[1:] = x[:-1] as one launch: dst overlaps src one element over, so program 0's store of
    # dst[15] is x[16], which program 1 loads as src[16]
    x = torch.from_numpy(np.random.default_rng(3).standard_normal(65).astype(np.float32))
    before = x.double().numpy().copy()
    client = RaceCheck()
    tilescope.trace(copy_kernel, clients=[client])[(4,)](x[:-1], x[1:], 64, BLOCK=16)
    np.testing.assert_allclose(x.double().numpy()[1:], before[:-1])  # every load ran before any store
    races = {f.details["race"]: f for f in client.report().findings}
    assert set(races) == {"read-after-write"}
    d = races["read-after-write"].details
    line = copy_kernel.fn.__code__.co_firstlineno + 3
    first, second = d["sites"]
    sides = [(s["argument"], s["element"], s["program"], s["access"]) for s in (first, second)]
    assert sides == [("dst_ptr", [15], [0, 0, 0], "store"), ("src_ptr", [16], [1, 0, 0], "load")]
    assert first["line"] == second["line"] == line and first["element_text"] == "dst_ptr[15]"
    assert d["first"] == first and d["second"] == second  # the older fields, unchanged in shape
    back = RaceReport.from_json(client.report().to_json()).findings[0].details
    assert back["sites"] == [first, second]

"""Every client on Gluon kernels unchanged: the tracer's TMA records, ``tilescope run`` on a script."""

from __future__ import annotations

import textwrap

import torch

import tilescope
from tests.frontends.gluon import kernels as gk
from tests.frontends.markers import sanitizer_run


def test_tracer_records_tma_copies_as_descriptor_loads_and_stores(tmp_path):
    gen = torch.Generator().manual_seed(5)
    a, b = torch.randn(100, 200, generator=gen), torch.randn(100, 200, generator=gen)

    def traced(kernel):
        return tilescope.trace(kernel, clients="tracer", trace_dir=tmp_path / "t")

    c = gk.add_tma_pipelined(a, b, traced, XBLOCK=32, YBLOCK=64, num_buffers=2)
    torch.testing.assert_close(c, a + b, rtol=2.0**-23, atol=0)
    ops = tilescope.load_trace(tmp_path / "t").ops
    loads = ops[ops.kind == "descriptor_load"]
    stores = ops[ops.kind == "descriptor_store"]
    # 4 programs of 32 rows x 4 column tiles of 64: two TMA loads and one TMA store per tile
    assert sorted(loads.argument.unique()) == ["a_desc", "b_desc"]
    assert list(stores.argument.unique()) == ["c_desc"]
    assert int(loads.active_lanes.sum()) == 2 * 100 * 200  # boxes past the tensor move nothing there
    assert int(stores.active_lanes.sum()) == 100 * 200


SCRIPT = textwrap.dedent("""
    import torch
    import triton
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    from triton.experimental.gluon.language.nvidia.hopper import tma, mbarrier


    @gluon.jit
    def memcpy_1d_tma_kernel(in_desc, out_desc, XBLOCK: gl.constexpr):
        pid = gl.program_id(0)
        smem = gl.allocate_shared_memory(in_desc.dtype, [XBLOCK], in_desc.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)
        mbarrier.expect(bar, in_desc.block_type.nbytes)
        tma.async_load(in_desc, [pid * XBLOCK], bar, smem)
        mbarrier.wait(bar, phase=0)
        mbarrier.invalidate(bar)
        tma.async_store(out_desc, [pid * XBLOCK], smem)
        tma.store_wait(pendings=0)


    @gluon.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
        offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
        gl.store(y_ptr + offs, gl.load(x_ptr + offs, mask=offs <= n) * 2, mask=offs < n)


    x = torch.randn(500, device="cuda")
    out = torch.empty_like(x)
    layout = gl.NVMMASharedLayout.get_default_for([64], gl.float32)
    in_desc = TensorDescriptor.from_tensor(x, [64], layout)
    out_desc = TensorDescriptor.from_tensor(out, [64], layout)
    memcpy_1d_tma_kernel[(triton.cdiv(500, 64),)](in_desc, out_desc, 64, num_warps=1)
    assert torch.equal(out, x), "wrong copy"
    scale_kernel[(1,)](x, torch.empty_like(x), 500, 512)
    print("script done")
""")


def test_tilescope_run_checks_an_unmodified_gluon_script(tmp_path):
    script = tmp_path / "gluon_tutorial.py"
    script.write_text(SCRIPT)
    run, reports = sanitizer_run(script, timeout=300, in_repo=False)
    assert run.returncode == 1, run.stderr  # one error finding
    assert "script done" in run.stderr  # the TMA copy ran and copied (a partial last box included)
    (report,) = reports
    assert report["summary"]["launches"] == 2
    (finding,) = report["findings"]
    line = next(i for i, text in enumerate(SCRIPT.splitlines(), 1) if "offs <= n" in text)
    assert (finding["kind"], finding["kernel"], finding["line"]) == (
        "out-of-bounds load",
        "scale_kernel",
        line,
    )
    assert finding["details"]["first_element"] == [500]


def test_the_view_marks_a_tma_box_s_masked_lanes_at_their_box_coordinates(tmp_path):
    from tilescope.viewer import TraceModel, write_reports

    gen = torch.Generator().manual_seed(7)
    a, b = torch.randn(100, 200, generator=gen), torch.randn(100, 200, generator=gen)
    launchers = []

    def traced(kernel):
        launchers.append(tilescope.trace(kernel, clients=["tracer", "profiler"], trace_dir=tmp_path))
        return launchers[-1]

    c = gk.add_tma_pipelined(a, b, traced, XBLOCK=32, YBLOCK=64, num_buffers=2)
    torch.testing.assert_close(c, a.double().add(b.double()).float(), rtol=2.0**-23, atol=0)
    write_reports(tmp_path, [r for r in launchers[0].reports if r.client == "profiler"])
    meta, _ = TraceModel(tmp_path).launch_container(1)
    notes = [f for f in meta["findings"] if f["kind"] == "masked lanes"]
    masked = {f["marks"][0]["argument"]: f["marks"][0] for f in notes}
    # 100 rows in boxes of 32: the last box's rows 100..127 are off, in every column tile
    assert masked["a_desc"]["element"][0] == 100 and masked["a_desc"]["program"] == 3
    # 200 columns in boxes of 64: the store box at columns 192..255 is clipped at column 200, which
    # is past the row's end (not the next row's first element, where its address would point)
    assert masked["c_desc"]["element"] == [0, 200] and masked["c_desc"]["program"] == 0

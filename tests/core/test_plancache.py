"""Plans on disk: a fresh process replays what an earlier one recorded, and nothing else.

The language layer's recorded builder calls (``frontends/triton/tape.py``) are kept per kernel in the
cache directory (``frontends/triton/plancache.py``). A later process must replay them to the same
bits, op records and findings as recording them again; an edited kernel, another constexpr or dtype,
another ``TRITON_F32_DEFAULT`` must record what they change; a broken or foreign file is ignored;
an empty ``TILESCOPE_CACHE_DIR`` writes nothing.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilescope.frontends.triton import plancache
from tilescope.frontends.triton.runtime import RUNTIME
from tilescope.frontends.triton.tape import Plan

#: kernels in the style of Triton's tutorials, run on random inputs against float64 references; the
#: script prints digests of the outputs and of the op stream (faults included), and how many builtin
#: calls it recorded
_SCRIPT = textwrap.dedent("""
    import hashlib, json, os, sys
    sys.path.insert(0, {tests!r})
    import numpy as np, torch, triton, triton.language as tl
    import tilescope
    from op_stream import Recorder
    from test_op_stream import stream
    from tilescope.frontends.triton import tape
    from tilescope.ir import Need

    recorded = []
    plan = tape.Recorder.plan
    tape.Recorder.plan = lambda self, result: recorded.append(1) or plan(self, result)

    @triton.jit
    def softmax(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = a_ptr + rm[:, None] * K + rk[None, :]
        b = b_ptr + rk[:, None] * N + rn[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc += tl.dot(tl.load(a), tl.load(b))  # input precision: TRITON_F32_DEFAULT, else tf32
            a += BK
            b += BK * N
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    @triton.jit(debug=True)
    def faults(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs <= n)  # off by one: lane n reads past x
        tl.device_assert(x >= 0, "x must be non-negative")
        tl.store(out_ptr + offs, x, mask=offs < n)

    rng = np.random.default_rng(7)
    dtype = getattr(torch, os.environ.get("PLANS_DTYPE", "float32"))
    block = int(os.environ.get("PLANS_BLOCK", "128"))
    recorders = []  # one a launch: a record's addresses are offsets from its launch's arguments

    def run(kernel):
        recorders.append(Recorder((Need.VALUES,)))
        return tilescope.trace(kernel, clients=[recorders[-1]])

    x = torch.from_numpy(rng.standard_normal((19, 100))).to(dtype)
    sm = torch.empty(19, 100)
    run(softmax)[(19,)](sm, x, 100, 100, BLOCK=block)
    assert torch.allclose(sm.double(), torch.softmax(x.double(), 1), rtol=1e-5, atol=1e-6)

    a, b = (torch.from_numpy(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2))
    c = torch.empty(64, 64)
    for _ in range(2):  # the second launch replays in memory
        run(matmul)[(2, 2)](a, b, c, 64, 64, 64, BM=32, BN=32, BK=16)
    assert torch.allclose(c.double(), a.double() @ b.double(), rtol=2e-2, atol=5e-2)

    y = torch.from_numpy(np.abs(rng.standard_normal(50)).astype(np.float32))
    y[7] = -1.0
    out = torch.zeros(50)
    run(faults)[(4,)](y, out, 50, BLOCK=16)
    assert len(recorders[-1].faults) == 2, recorders[-1].faults  # the off-by-one read, the failed assert

    outputs = hashlib.sha256(b"".join(t.numpy().tobytes() for t in (sm, c, out))).hexdigest()
    rows = [sorted(rows.items()) for r in recorders for rows in stream(r, values=True)]
    ops = hashlib.sha256(repr(rows).encode()).hexdigest()
    print(json.dumps({{"outputs": outputs, "stream": ops, "recorded": len(recorded)}}))
""")

_EDITED = ("    num = tl.exp(x)\n", "    num = tl.exp2(x * 1.4426950408889634)\n")


def _run(tmp_path: Path, cache: str | None, edited: bool = False, **env: str) -> dict:
    script = _SCRIPT.format(tests=str(Path(__file__).parent))
    if edited:
        assert _EDITED[0] in script
        script = script.replace(*_EDITED)
    (tmp_path / "kernels.py").write_text(script)  # Triton reads a kernel's source from its file
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), **env}
    if cache is not None:
        env[plancache.codecache.CACHE_ENV] = cache
    done = subprocess.run([sys.executable, "kernels.py"], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _plan_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("plans-*"))


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def _same(got: dict, want: dict) -> None:
    assert (got["outputs"], got["stream"]) == (want["outputs"], want["stream"])


def test_a_fresh_process_replays_the_stored_plans_to_the_same_bits_and_records(tmp_path, cache):
    reference = _run(tmp_path, "")  # no cache: the language layer records everything
    first = _run(tmp_path, str(cache))
    assert first["recorded"] == reference["recorded"] > 0
    assert len(_plan_files(cache)) == 3  # one per kernel
    stored = {p: p.stat().st_mtime_ns for p in _plan_files(cache)}
    again = _run(tmp_path, str(cache))
    assert again["recorded"] == 0
    _same(again, reference)
    _same(first, reference)
    assert {p: p.stat().st_mtime_ns for p in _plan_files(cache)} == stored  # nothing new: not rewritten


@pytest.mark.parametrize(
    ("change", "env"),
    [("constexpr", {"PLANS_BLOCK": "256"}), ("dtype", {"PLANS_DTYPE": "float16"}), ("source", {})],
)
def test_another_constexpr_dtype_or_source_records_what_it_changes(tmp_path, cache, change, env):
    _run(tmp_path, str(cache))
    edited = change == "source"
    reference = _run(tmp_path, "", edited=edited, **env)
    changed = _run(tmp_path, str(cache), edited=edited, **env)
    assert 0 < changed["recorded"] < reference["recorded"]  # the softmax's new calls; the rest replay
    _same(changed, reference)
    assert _run(tmp_path, str(cache), edited=edited, **env)["recorded"] == 0  # kept in its file too


def test_tl_dot_under_another_fp32_default_does_not_replay_the_tf32_plan(tmp_path, cache):
    tf32 = _run(tmp_path, str(cache))
    ieee = _run(tmp_path, str(cache), TRITON_F32_DEFAULT="ieee")
    assert ieee["recorded"] > 0
    _same(ieee, _run(tmp_path, "", TRITON_F32_DEFAULT="ieee"))
    assert ieee["outputs"] != tf32["outputs"]


@pytest.mark.parametrize("damage", ["flipped", "truncated", "foreign", "garbage"])
def test_a_broken_or_foreign_file_is_ignored_and_replaced(tmp_path, cache, damage):
    reference = _run(tmp_path, str(cache))
    files = _plan_files(cache)
    victim = max(files, key=lambda p: p.stat().st_size)
    data = victim.read_bytes()
    broken = {
        "flipped": data[:100] + bytes([data[100] ^ 1]) + data[101:],
        "truncated": data[: len(data) // 2],
        "foreign": min(files, key=lambda p: p.stat().st_size).read_bytes(),  # another kernel's file
        "garbage": b"\x80\x05not a plan",
    }[damage]
    victim.write_bytes(broken)
    again = _run(tmp_path, str(cache))
    assert again["recorded"] > 0
    _same(again, reference)
    assert _run(tmp_path, str(cache))["recorded"] == 0  # the next store replaced it


def test_an_empty_cache_dir_writes_no_plans(tmp_path):
    _run(tmp_path, "")
    assert not (tmp_path / "xdg").exists()


def test_a_file_naming_any_other_global_does_not_load(tmp_path, monkeypatch):
    monkeypatch.setenv(plancache.codecache.CACHE_ENV, str(tmp_path))
    name = plancache.key("k.py", "k", "options")
    body = pickle.dumps([(("k",), [("create_x", [], {})], ("const", os.system))])
    plancache.codecache.write(name, plancache._seal(name, body))
    assert plancache.load(name, RUNTIME) == {}


def test_a_plan_holding_an_object_a_file_cannot_represent_is_not_stored():
    fine = Plan([("create_add", [("ref", ("arg", 0))], {})], ("const", 1.5))
    assert plancache._storable({("k", (int, 3)): fine}, RUNTIME) == [(("k", (int, 3)), fine.calls, fine.out)]
    for unknown in (lambda: 0, object()):
        plan = Plan([("create_x", [("const", unknown)], {})], ("const", 0))
        assert plancache._storable({("k",): plan}, RUNTIME) == []

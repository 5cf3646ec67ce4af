"""The corpus, migrated: each form against float64 references on Triton 3.9, and against Triton 3.8.

Fast: every corpus kernel in every form, one ragged case, on Triton 3.9's interpreter.
Slow: ``tilescope migrate --verify`` of the whole corpus against the Triton 3.8 oracle, and a
deliberately broken migration that it must catch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from tilescope.cli import main
from tilescope.migrate.codemod import MODES, migrate_source
from tilescope.migrate.oracle import DEFAULT_VENV
from tilescope.migrate.runner import load_module
from tilescope.migrate.verify import compare, run_job, verify

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = sorted((ROOT / "tests" / "blockptr_corpus").glob("*.py"))
ORACLE = Path(os.environ.get("TILESCOPE_ORACLE_PYTHON", ROOT / DEFAULT_VENV / "bin" / "python"))
needs_oracle = pytest.mark.skipif(
    not ORACLE.exists(),
    reason=f"no Triton 3.8 oracle at {ORACLE} "
    "(make it with `tilescope migrate --verify` or set TILESCOPE_ORACLE_PYTHON)",
)


@pytest.fixture(scope="module")
def migrated_runs(tmp_path_factory):
    """Migrate every corpus file in every mode and run case 1 (ragged) of each in one child process."""
    work = tmp_path_factory.mktemp("corpus")
    jobs = []
    for path in CORPUS:
        module = load_module(path)
        shape = module.cases()[1]
        arrays = module.make_inputs(np.random.default_rng(7), **shape)
        np.savez(work / f"{path.stem}_in.npz", **arrays)
        for mode in MODES:
            target = work / mode / path.name
            target.parent.mkdir(exist_ok=True)
            target.write_text(migrate_source(path.read_text(), str(path), mode).migrated)
            jobs.append(
                {
                    "module": str(target),
                    "shape": shape,
                    "inputs": str(work / f"{path.stem}_in.npz"),
                    "outputs": str(work / f"{path.stem}_{mode}_out.npz"),
                    "source": path,
                    "mode": mode,
                }
            )
    results = run_job(
        sys.executable,
        "interpreter",
        [{k: v for k, v in j.items() if k not in ("source", "mode")} for j in jobs],
        work / "job.json",
        timeout=900,
    )
    return {(j["source"].stem, j["mode"]): (j, r) for j, r in zip(jobs, results, strict=True)}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_migrated_form_matches_reference(migrated_runs, path, mode):
    job, result = migrated_runs[(path.stem, mode)]
    assert result["ok"], result.get("trace", result["error"])
    reference = load_module(path).reference
    with np.load(job["inputs"]) as x, np.load(job["outputs"]) as y:
        wide = {k: x[k].astype(np.float64) if x[k].dtype.kind == "f" else x[k] for k in x.files}
        for name, want in reference(wide, **job["shape"]).items():
            ok, _, why = compare(
                name, y[name].astype(np.float64), np.asarray(want, np.float64), y[name].dtype.name
            )
            assert ok, why


def test_corpus_size_and_protocol():
    assert len(CORPUS) >= 15
    for path in CORPUS:
        module = load_module(path)
        for name in ("cases", "make_inputs", "launch", "reference", "bench_case"):
            assert callable(getattr(module, name, None)), f"{path.name} lacks {name}()"
        for shape in module.cases():
            arrays = module.make_inputs(np.random.default_rng(0), **shape)
            assert all(np.any(a != 0) for a in arrays.values()), f"{path.name}: an all-zero input"


@pytest.mark.slow
@needs_oracle
def test_verify_whole_corpus_against_triton38(capsys):
    assert (
        main(["migrate", str(ROOT / "tests" / "blockptr_corpus"), "--verify", "--oracle-python", str(ORACLE)])
        == 0
    )
    out = capsys.readouterr().out
    assert out.count(": agree") == sum(len(load_module(p).cases()) for p in CORPUS)


@pytest.mark.slow
@needs_oracle
def test_verify_catches_a_wrong_migration(tmp_path):
    path = ROOT / "tests" / "blockptr_corpus" / "matmul_tma_style.py"
    broken = migrate_source(path.read_text(), str(path)).migrated.replace(
        "a_off[1] + BLOCK_K", "a_off[1] + 16"
    )
    assert "a_off[1] + 16" in broken
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / path.name).write_text(broken)
    (tmp_path / "io").mkdir()
    results = verify([(path, tmp_path / "m" / path.name)], ORACLE, tmp_path / "io")
    # the third case has a single K tile, so a wrong advance cannot show there
    assert [r.status for r in results] == ["disagree", "disagree", "agree"]

"""racecheck on the race corpus: every racy kernel found at its lines with its kinds, every clean one silent.

A finding is reduced to the tags of its two lines (``# race: <tag>`` comments in the corpus) and the
race kinds it counts. The verdict — which pairs of lines race — must be the same in batched and
serial mode and under three seeded concurrent schedules; the kinds are checked in batched mode,
where the order of conflicting accesses is the engine's program order (a concurrent schedule may
run the higher program first, turning a read-after-write into a write-after-read). Clean kernels
are also run for real and compared with a float64 reference.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from racecheck_corpus import all_cases, tags

import tilescope
from tilescope.clients.racecheck import RaceCheck

CASES = all_cases()
MODES = [{"mode": "batched"}, {"mode": "serial"}, *({"mode": "concurrent", "seed": s} for s in (0, 1, 2))]


def _run(case, **options):
    args, kwargs = case.make_args(np.random.default_rng(0))
    before = copy.deepcopy(args)
    client = RaceCheck()
    case.run(lambda kernel: tilescope.trace(kernel, clients=[client], **options), args, kwargs)
    return client.report(), before, args


def _verdict(case, report) -> dict[frozenset, frozenset]:
    lines = {}
    for kernel in {case.kernel, *getattr(case, "kernels", ())}:
        lines.update(tags(kernel))
    out = {}
    for f in report.findings:
        first = f.details["first"]
        assert f.kernel == case.kernel.fn.__name__ or case.launches is not None, f
        got = frozenset(lines.get(line, f"line {line}") for line in (f.line, first["line"]))
        assert got not in out, f"two findings for one pair of lines: {got}"
        out[got] = frozenset(f.details["kinds"])
    return out


def _expected(case) -> dict[frozenset, frozenset]:
    return {r.tags: r.kinds for r in case.races}


def test_corpus_size():
    racy = [c for c in CASES if c.racy]
    clean = [c for c in CASES if not c.racy]
    assert len(racy) >= 30 and len(clean) >= 30, (len(racy), len(clean))
    assert all(c.check is not None for c in clean), [c.name for c in clean if c.check is None]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_batched_verdict_and_kinds(case):
    report, _, _ = _run(case)
    assert _verdict(case, report) == _expected(case), report.to_text()


@pytest.mark.parametrize("case", [c for c in CASES if not c.racy], ids=lambda c: c.name)
def test_clean_kernel_computes_the_reference(case):
    report, before, after = _run(case, compute_outputs=True)
    assert report.findings == []
    case.check(before, after)


@pytest.mark.slow
@pytest.mark.parametrize("options", MODES[1:], ids=lambda o: "-".join(map(str, o.values())))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_verdict_is_the_same_in_every_mode(case, options):
    report, _, _ = _run(case, **options)
    verdict = _verdict(case, report)
    assert set(verdict) == set(_expected(case)), report.to_text()
    for finding in report.findings:
        assert finding.details["seed"] == options.get("seed", 0)

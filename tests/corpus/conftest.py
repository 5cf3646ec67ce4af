"""Shared fixtures of the library corpus: every kernel a library launches runs on tilescope's engine under the
sanitizer, on a modelled H200 (the library sees the GPU it was written for; its tensors live on the CPU)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import torch

import tilescope
from tilescope.gpu import modelled_gpu, resolve_gpu
from tilescope.render import report_text


@pytest.fixture
def sanitized() -> Iterator[object]:
    """Kernels launched in the test run under the sanitizer; the test fails on any finding or no launch."""
    torch.manual_seed(0)
    with modelled_gpu(resolve_gpu("h200")), tilescope.intercepting("sanitizer") as run:
        yield run
    reports = run.reports
    assert reports, "the op launched no Triton kernel on tilescope's engine"
    findings = [f for report in reports for f in report.findings]
    assert not findings, "\n\n".join(report_text(r) for r in reports)


def compare(op: Callable[..., Any], reference: Callable[..., Any], inputs: Sequence[torch.Tensor], *,
            grad_of: Sequence[int] = (), rtol: float = 1e-4, atol: float = 1e-5,
            rms: float | None = None) -> None:
    """``op(*inputs)`` against ``reference`` on float64 copies of the floating inputs: every output, then the
    gradients of the inputs numbered in ``grad_of`` through the same random output gradients.

    Element by element within ``rtol``/``atol``; with ``rms``, instead the error's root mean square relative
    to the reference's (for reduced-precision arithmetic, whose per-element error has no useful bound)."""
    ours = [x.detach().clone().requires_grad_(i in grad_of) for i, x in enumerate(inputs)]
    exact = [x.detach().double().requires_grad_(i in grad_of) if x.is_floating_point() else x
             for i, x in enumerate(inputs)]
    outs, refs = _outputs(op(*ours)), _outputs(reference(*exact))
    assert len(outs) == len(refs), f"{len(outs)} outputs, the reference has {len(refs)}"
    for k, (out, ref) in enumerate(zip(outs, refs, strict=True)):
        _close(out, ref.detach(), f"output {k}", rtol, atol, rms)
    if not grad_of:
        return
    douts = [torch.randn_like(ref) for ref in refs]
    torch.autograd.backward(list(outs), [d.to(o.dtype) for o, d in zip(outs, douts, strict=True)])
    torch.autograd.backward(list(refs), douts)
    for i in grad_of:
        assert ours[i].grad is not None, f"the op gave no gradient for input {i}"
        _close(ours[i].grad, exact[i].grad, f"gradient of input {i}", rtol, atol, rms)


def _close(actual: torch.Tensor, expected: torch.Tensor, what: str, rtol: float, atol: float,
           rms: float | None) -> None:
    if rms is None:
        torch.testing.assert_close(actual.double(), expected, rtol=rtol, atol=atol,
                                   msg=lambda m: f"{what}: {m}")
        return
    error = (actual.double() - expected).pow(2).mean().sqrt() / expected.pow(2).mean().sqrt()
    assert error <= rms, f"{what}: relative RMS error {error:.2e} > {rms:.0e}"


def _outputs(result: Any) -> tuple[torch.Tensor, ...]:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)

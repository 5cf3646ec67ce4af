"""pytest plug-in: ``pytest --tilescope=sanitizer`` runs each test's Triton kernels on the engine.

Every ``@triton.jit`` launch of a test goes through the chosen clients; a test during which a
client reports an error fails, with the report as its failure message. Without ``--tilescope`` the
plug-in only adds its options and changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--tilescope=CLIENTS`` and ``--tilescope-trace-dir=DIR``."""
    group = parser.getgroup("tilescope", "run Triton kernels on tilescope's CPU engine")
    group.addoption("--tilescope", metavar="CLIENTS", default=None,
                    help="run every test's Triton kernels under these clients (comma-separated, e.g. "
                         "sanitizer); a test whose kernels get an error finding fails")
    group.addoption("--tilescope-trace-dir", metavar="DIR", default="tilescope-trace",
                    help="where the tracer client writes (default: ./tilescope-trace; must not exist)")


def pytest_configure(config: pytest.Config) -> None:
    """With ``--tilescope``: route Triton launches to the engine for the whole session."""
    spec = config.getoption("tilescope")
    if not spec:
        return
    from .clients.tracer.layout import TraceError, prepare
    from .session import current

    options: dict[str, Any] = {}
    try:
        if "tracer" in [s.strip() for s in spec.split(",")]:
            trace_dir = config.getoption("tilescope_trace_dir")
            prepare(trace_dir)
            options.update(trace_dir=trace_dir, append=True)
        interceptor = current().intercept(spec, **options)
    except (ValueError, TraceError) as exc:
        raise pytest.UsageError(f"--tilescope: {exc}") from None
    interceptor.__enter__()
    config.add_cleanup(interceptor.__exit__)
    config.stash[_KEY] = interceptor


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Each test starts with fresh launchers, so its reports are its own."""
    interceptor = item.config.stash.get(_KEY, None)
    if interceptor is not None:
        interceptor.reset()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Fail the test when a client reported an error during it (the test's own failure comes first)."""
    result = yield
    interceptor = item.config.stash.get(_KEY, None)
    if interceptor is None:
        return result
    failing = [r for r in interceptor.reports if r.errors]
    if failing:
        from .render import report_text

        count = sum(len(r.errors) for r in failing)
        text = "\n\n".join(report_text(r) for r in failing)
        plural = "s" if count != 1 else ""
        pytest.fail(f"tilescope: {count} error finding{plural} in this test's kernels\n\n{text}",
                    pytrace=False)
    return result

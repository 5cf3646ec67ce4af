"""pytest plug-in: ``pytest --tilescope=sanitizer`` runs each test's kernels on the engine.

Every kernel launch of a test goes through the chosen clients; a test during which a client
reports an error fails, with the report as its failure message. The reports of all tests merge
into one per client, each finding listing the tests that had it (``details["tests"]``, by node id),
printed at the end and written with ``--tilescope-report=PATH`` (JSON); under pytest-xdist each
worker sends its merged reports to the controller, so ``-n 2`` reports what one process reports.
Without ``--tilescope`` the plug-in only adds its options and changes nothing, except in a process
started under ``tilescope run`` (a pytest-xdist worker of ``tilescope run -m pytest -n 2``): there
it intercepts as ``tilescope run`` asked and leaves its reports where ``tilescope run`` collects
them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .scripts import RUN_ENV

_KEY = pytest.StashKey[Any]()
_REPORTS = pytest.StashKey[list]()  # (test node id, its reports); None for a worker's merged reports
_FAILS_TESTS = pytest.StashKey[bool]()  # --tilescope: a test with an error finding fails


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--tilescope=CLIENTS``, ``--tilescope-trace-dir=DIR``, ``--tilescope-report=PATH``,
    ``--tilescope-gpu=NAME`` and ``--tilescope-bounds=POLICY``."""
    from .engine.memory import BOUNDS

    group = parser.getgroup("tilescope", "run Triton kernels on tilescope's CPU engine")
    group.addoption("--tilescope", metavar="CLIENTS", default=None,
                    help="run every test's Triton kernels under these clients (comma-separated, e.g. "
                         "sanitizer); a test whose kernels get an error finding fails")
    group.addoption("--tilescope-trace-dir", metavar="DIR", default="tilescope-trace",
                    help="where the tracer client writes (default: ./tilescope-trace; must not exist)")
    group.addoption("--tilescope-report", metavar="PATH", default=None,
                    help="write the session's merged reports (all tests, all workers) to PATH as JSON")
    group.addoption("--tilescope-gpu", metavar="NAME", default=None,
                    help="with --tilescope on a machine without a GPU, CUDA tensors live on the CPU and "
                         "device queries answer as this GPU: h200 (default), h100, a100, mi300x, or off "
                         "(default: $TILESCOPE_GPU)")
    group.addoption("--tilescope-bounds", metavar="POLICY", default=None, choices=BOUNDS,
                    help="with --tilescope, how far a pointer may reach past its argument's view: warn "
                         "(default: inside the view's storage it is a warning), view (an error), storage "
                         "(fine) (default: $TILESCOPE_BOUNDS)")


def _run_request() -> dict | None:
    """What ``tilescope run`` asked of this process, when it started it (and is not this process)."""
    raw = os.environ.get(RUN_ENV)
    if not raw:
        return None
    request = json.loads(raw)
    return request if request.get("pid") != os.getpid() else None


_NEEDS_TILESCOPE = ("tilescope_bounds", "tilescope_gpu", "tilescope_report")


def _refuse_options_without_tilescope(config: pytest.Config) -> None:
    """An option that only changes ``--tilescope`` runs, given without it, would silently do nothing."""
    given = [name for name in _NEEDS_TILESCOPE if config.getoption(name) is not None]
    if given:
        flags = " and ".join("--" + name.replace("_", "-") for name in given)
        verb = "has" if len(given) == 1 else "have"
        raise pytest.UsageError(f"{flags} {verb} no effect without --tilescope=CLIENTS: add one (e.g. "
                                "--tilescope=sanitizer) or drop it")


def pytest_configure(config: pytest.Config) -> None:
    """With ``--tilescope`` (or under ``tilescope run``): route launches to the engine for the session."""
    spec = config.getoption("tilescope")
    request = None if spec else _run_request()
    if not spec and request is None:
        _refuse_options_without_tilescope(config)
        return
    from .clients.tracer.layout import TraceError, prepare
    from .errors import TilescopeError
    from .gpu import modelled_gpu, resolve_gpu
    from .session import current

    options: dict[str, Any] = {}
    try:
        if request is not None:
            spec, options = request["clients"], dict(request["options"])
        else:
            if config.getoption("tilescope_bounds"):
                options["bounds"] = config.getoption("tilescope_bounds")
            if "tracer" in [s.strip() for s in spec.split(",")]:
                trace_dir = config.getoption("tilescope_trace_dir")
                if not hasattr(config, "workerinput"):
                    prepare(trace_dir)
                options.update(trace_dir=trace_dir, append=True)
        interceptor = current().intercept(spec, **options)
        gpu = resolve_gpu(request.get("gpu") if request is not None else config.getoption("tilescope_gpu"))
    except (ValueError, TraceError, TilescopeError) as exc:
        raise pytest.UsageError(f"--tilescope: {exc}") from None
    interceptor.__enter__()
    config.add_cleanup(interceptor.__exit__)
    model = modelled_gpu(gpu)
    model.__enter__()
    config.add_cleanup(lambda: model.__exit__(None, None, None))
    config.stash[_KEY] = interceptor
    config.stash[_REPORTS] = []
    config.stash[_FAILS_TESTS] = request is None


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
    try:
        result = yield
    finally:
        interceptor = item.config.stash.get(_KEY, None)
        if interceptor is not None:
            item.config.stash[_REPORTS].append((item.nodeid, interceptor.reports))
    if interceptor is None or not item.config.stash[_FAILS_TESTS]:
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


def _merged(config: pytest.Config) -> list:
    from .clients.base import merge_by_origin

    # tests listed by node id, as a controller lists its workers' tests: the same with -n N as without
    origins = sorted(config.stash.get(_REPORTS, []), key=lambda o: (o[0] is None, o[0] or ""))
    return merge_by_origin(origins, "tests")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist controller: add a finished worker's reports to the session's."""
    raw = getattr(node, "workeroutput", {}).get("tilescope_reports")
    if raw:
        from .clients.base import Report

        reports = [Report.from_json(d) for d in json.loads(raw)]
        node.config.stash.setdefault(_REPORTS, []).append((None, reports))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Hand the merged reports to the controller, ``tilescope run`` or ``--tilescope-report``."""
    config = session.config
    if _KEY not in config.stash and not hasattr(config, "workeroutput"):
        return
    reports = _merged(config)
    documents = [r.to_dict() for r in reports]
    if hasattr(config, "workeroutput"):
        config.workeroutput["tilescope_reports"] = json.dumps(documents, default=str)
    request = _run_request()
    if request is not None and documents:
        out = Path(request["reports"]) / f"reports-{os.getpid()}.json"
        out.write_text(json.dumps(documents, default=str), encoding="utf-8")
    path = config.getoption("tilescope_report")
    if path and not hasattr(config, "workerinput"):
        Path(path).write_text(json.dumps(documents, indent=2, default=str), encoding="utf-8")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line per client: what the session's kernels added up to."""
    if _KEY not in config.stash and _REPORTS not in config.stash:
        return
    for report in _merged(config):
        n = len(report.findings)
        plural = "s" if n != 1 else ""
        terminalreporter.write_line(f"tilescope {report.client}: {n} finding{plural} in this session")

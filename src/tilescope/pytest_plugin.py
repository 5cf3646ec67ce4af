"""pytest plug-in: ``pytest --tilescope=CLIENTS`` runs each test's Triton kernels on the engine."""

from __future__ import annotations


def pytest_addoption(parser) -> None:
    """Register ``--tilescope``."""
    group = parser.getgroup("tilescope")
    group.addoption("--tilescope", action="store", default=None, metavar="CLIENTS",
                    help="run every Triton kernel of each test on tilescope's CPU engine with these clients")

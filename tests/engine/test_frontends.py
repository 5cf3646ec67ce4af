"""Frontends are plug-ins: tilescope.trace dispatches to whichever frontend accepts the kernel."""

from __future__ import annotations

import sys
import types

import pytest

import tilescope
from tilescope import frontends


class ToyKernel:
    """A kernel of a made-up DSL."""


class ToyFrontend:
    name = "toy"

    def accepts(self, kernel):
        return isinstance(kernel, ToyKernel)

    def trace(self, kernel, **options):
        return ("toy launcher", kernel, options)


@pytest.fixture
def toy_plugin(monkeypatch):
    module = types.ModuleType("toy_frontend_plugin")
    module.FRONTEND = ToyFrontend()
    monkeypatch.setitem(sys.modules, "toy_frontend_plugin", module)
    monkeypatch.setattr(frontends, "_plugins", lambda: (("toy", "toy_frontend_plugin:FRONTEND"),))


def test_a_plugin_frontend_gets_its_kernels(toy_plugin):
    kernel = ToyKernel()
    assert tilescope.trace(kernel, clients="sanitizer") == ("toy launcher", kernel, {"clients": "sanitizer"})
    assert [f.name for f in frontends.frontends()] == ["triton", "toy"]


def test_an_unknown_kernel_names_the_installed_frontends(toy_plugin):
    with pytest.raises(
        tilescope.LaunchError, match="no tilescope frontend accepts a int; installed frontends: triton, toy"
    ):
        tilescope.trace(42)

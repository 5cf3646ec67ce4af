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
    options = ("flavour",)

    def accepts(self, kernel):
        return "kernel" if isinstance(kernel, ToyKernel) else None

    def launcher(self, kernel, *, clients, options, session, **frontend_options):
        return ("toy launcher", kernel, [c.name for c in clients], options.mode, frontend_options)

    def install_route(self):
        pass


@pytest.fixture
def toy_plugin(monkeypatch):
    module = types.ModuleType("toy_frontend_plugin")
    module.FRONTEND = ToyFrontend()
    monkeypatch.setitem(sys.modules, "toy_frontend_plugin", module)
    monkeypatch.setattr(frontends, "_plugins", lambda: (("toy", "toy_frontend_plugin:FRONTEND"),))


def test_a_plugin_frontend_gets_its_kernels(toy_plugin):
    kernel = ToyKernel()
    launcher = tilescope.trace(kernel, clients="sanitizer", mode="serial", flavour="mild")
    assert launcher == ("toy launcher", kernel, ["sanitizer"], "serial", {"flavour": "mild"})
    assert [f.name for f in frontends.frontends()] == ["triton", "toy"]


def test_options_no_one_takes_are_refused_with_the_allowed_ones(toy_plugin):
    with pytest.raises(
        tilescope.LaunchError, match=r"unknown option 'flavor' for a toy kernel; options are .*flavour"
    ):
        tilescope.trace(ToyKernel(), flavor="mild")
    with pytest.raises(tilescope.LaunchError, match=r"mode must be one of 'batched', 'serial', 'concurrent'"):
        tilescope.trace(ToyKernel(), mode="seriall")


def test_an_unknown_kernel_names_the_installed_frontends(toy_plugin):
    with pytest.raises(
        tilescope.LaunchError, match="no tilescope frontend accepts a int; installed frontends: triton, toy"
    ):
        tilescope.trace(42)

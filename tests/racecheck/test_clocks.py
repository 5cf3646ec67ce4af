"""The happens-before model on its own: releases, acquires, scopes, release sequences and relays."""

import numpy as np
import pytest

from tilescope.clients.racecheck.clocks import Clocks

FLAG, OTHER = 0x1000, 0x2000


def _op(clocks, program, address, op, sem, scope="gpu"):
    """Program ``program`` runs one atomic on ``address``; returns its clock."""
    clock = clocks.tick(np.array([program]))
    clocks.synchronise(np.array([address]), np.array([program]), clock, op, sem, scope)
    return int(clock[0])


def _plain(clocks, program):
    return int(clocks.tick(np.array([program]))[0])


def _ordered(clocks, before, clock, after) -> bool:
    return bool(clocks.ordered(np.array([before]), np.array([clock]), np.array([after]))[0])


@pytest.mark.parametrize(("publish", "wait", "scope", "ordered"), [
    (("store", "release"), ("load", "acquire"), "gpu", True),
    (("xchg", "acq_rel"), ("cas", "acq_rel"), "sys", True),
    (("store", "relaxed"), ("load", "acquire"), "gpu", False),
    (("store", "release"), ("load", "relaxed"), "gpu", False),
    (("store", "release"), ("load", "acquire"), "cta", False),
    (("xchg", "acquire"), ("load", "acquire"), "gpu", False),
])
def test_flag_publication(publish, wait, scope, ordered):
    clocks = Clocks(3)
    data = _plain(clocks, 0)
    _op(clocks, 0, FLAG, *publish, scope)
    _op(clocks, 1, FLAG, *wait, scope)
    assert _ordered(clocks, 0, data, 1) is ordered
    assert not _ordered(clocks, 0, _plain(clocks, 0), 1)  # what the producer does after publishing


def test_release_sequence_continues_through_relaxed_read_modify_writes_and_ends_at_a_plain_store():
    clocks = Clocks(4)
    data = _plain(clocks, 0)
    _op(clocks, 0, FLAG, "store", "release")
    _op(clocks, 1, FLAG, "add", "relaxed")  # continues program 0's release sequence
    _op(clocks, 2, FLAG, "load", "acquire")
    assert _ordered(clocks, 0, data, 2)
    _op(clocks, 1, FLAG, "store", "relaxed")  # a store that does not release ends it
    _op(clocks, 3, FLAG, "load", "acquire")
    assert not _ordered(clocks, 0, data, 3)


def test_relays_are_transitive_and_break_at_a_link_without_acquire():
    for hop_sem, ordered in (("acquire", True), ("relaxed", False)):
        clocks = Clocks(3)
        data = _plain(clocks, 0)
        _op(clocks, 0, FLAG, "store", "release")
        _op(clocks, 1, FLAG, "load", hop_sem)
        _op(clocks, 1, OTHER, "store", "release")
        _op(clocks, 2, OTHER, "load", "acquire")
        assert _ordered(clocks, 0, data, 2) is ordered


def test_too_many_programs_stop_tracking():
    clocks = Clocks(10, max_programs=4)
    _op(clocks, 0, FLAG, "store", "release")
    _op(clocks, 1, FLAG, "load", "acquire")
    assert clocks.untracked and not _ordered(clocks, 0, 1, 1)

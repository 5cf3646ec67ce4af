"""Ray mode on a local cluster this test starts (127.0.0.1 only): the same merged report as one local
worker, through a crash and a hang."""

from __future__ import annotations

import pytest
from sweep_helpers import MIXED_STATUSES, essence, mixed_spec

from tilescope.sweep import load, local_backend, ray_backend, sweep

ray = pytest.importorskip("ray")


@pytest.fixture
def cluster():
    """A two-CPU Ray cluster on this machine's loopback address, shut down afterwards."""
    ray.init(address="local", _node_ip_address="127.0.0.1", num_cpus=2, include_dashboard=False,
             log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow  # a Ray cluster's start, and two sweeps that wait out a cell's time limit
def test_ray_tasks_report_what_one_local_worker_reports(cluster, tmp_path):
    spec = load(mixed_spec(tmp_path))
    on_ray = sweep(spec, tmp_path / "ray", ray_backend("auto", retries=0)).to_dict()
    sequential = sweep(spec, tmp_path / "one", local_backend(1)).to_dict()
    assert essence(on_ray) == essence(sequential)
    assert {c["id"]: c["status"] for c in on_ray["cells"]} == MIXED_STATUSES
    assert len(on_ray["reports"][0]["findings"]) == 1
    crashed = next(c for c in on_ray["cells"] if c["status"] == "crashed")
    assert crashed["message"].startswith("its Ray worker died (tried 1 time")

"""``tilescope.reports()``: the reports of every client that saw a launch in this process."""

from __future__ import annotations

from .clients.base import Client, Report
from .engine.hub import LAUNCH_OBSERVERS, Hub
from .ir import LaunchInfo

_clients: dict[int, Client] = {}


def _observe(hub: Hub, info: LaunchInfo) -> None:
    for client in hub.clients:
        _clients.setdefault(id(client), client)


LAUNCH_OBSERVERS.append(_observe)


def reports() -> list[Report]:
    """One report per client that saw at least one launch in this process, in order of first launch."""
    return [client.report() for client in _clients.values()]

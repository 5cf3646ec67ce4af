"""The ``determinism`` client: output elements whose bits depend on the schedule.

Run a launch under several seeded concurrent schedules (``schedules=N``, each from the same
memory) and the client compares, bit for bit, every tensor argument the launch wrote as each
schedule left it. Every element that differs is attributed to the op that wrote it last (a
floating-point ``atomic_add`` whose accumulation order changed, the winner of an ``atomic_xchg``
or ``cas``, a racing plain store): one finding per (site, tensor), with the element coordinates,
the values each seed left and their spread. A kernel whose result is order-independent (integer
atomics, disjoint stores) passes silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir import ArgumentInfo, LaunchInfo, Need, OpKind, OpRecord, element_text
from ..base import Client, Finding
from ..racecheck.findings import Access, access_of
from ..racecheck.shadow import AddressMap, enabled_lanes
from ..sanitizer.explain import Note
from .report import KIND, DeterminismReport, headline

_WRITES = frozenset({OpKind.STORE, OpKind.ATOMIC, OpKind.DESCRIPTOR_STORE})


@dataclass
class _Schedules:
    """The schedules of one launch seen so far: what each left in memory, and who wrote last."""

    launch: LaunchInfo
    seeds: list[int] = field(default_factory=list)
    outputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    arguments: dict[str, ArgumentInfo] = field(default_factory=dict)
    writers: dict[int, np.ndarray] = field(default_factory=dict)  # region -> last writing site per byte
    map: AddressMap = field(default_factory=AddressMap)


def _hint(access: Access, floating: bool) -> str:
    if access.atomic and access.what.endswith(("add", "reduce add")) and floating:
        return ("floating-point atomic_add sums in the order programs arrive: store per-program partials and "
                "reduce them in a fixed order (a second pass), or accumulate in integers")  # fmt: skip
    if access.atomic:
        return f"the outcome of {access.what} depends on which program gets there first"
    return "programs race on these elements (run racecheck): the last writer depends on the schedule"


class Determinism(Client):
    """Output bits that change with the schedule (run with ``schedules=N``, N > 1)."""

    name = "determinism"
    kinds = _WRITES
    needs = frozenset({Need.MEMORY, Need.ARGUMENT_EVENTS})

    def __init__(self) -> None:
        self._current: _Schedules | None = None
        self._accesses: dict[Access, int] = {}
        self._findings: list[Finding] = []
        self._compared = 0
        self._single = 0

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """The first schedule of a launch starts a comparison; later ones join it."""
        if launch.options.get("schedule", 0) == 0:
            self._current = _Schedules(launch)
            for argument in launch.arguments:
                self.on_argument(argument)
        self._current.seeds.append(int(launch.options.get("seed", 0)))

    def on_argument(self, argument: ArgumentInfo) -> None:
        """Tensors (also those found behind pointers) are where written bytes are looked up."""
        if argument.kind == "tensor" and self._current is not None:
            self._current.map.add(argument)

    def on_op(self, record: OpRecord) -> None:
        """Remember the site that wrote each byte last (in the first schedule)."""
        state = self._current
        if state is None or len(state.seeds) > 1 or (record.kind is OpKind.ATOMIC and
                                                      record.attrs.get("op") == "load"):  # fmt: skip
            return
        site = self._accesses.setdefault(access_of(record), len(self._accesses))
        _, address = enabled_lanes(record)
        for r, take in state.map.split(address):
            region = state.map.regions[r]
            writers = state.writers.get(r)
            if writers is None:
                writers = state.writers[r] = np.full(region.hi - region.lo, -1, np.int32)
            start = (address if take is None else address[take]) - region.lo
            writers[(start[:, None] + np.arange(record.itemsize)).reshape(-1)] = site

    def on_memory(self, argument: ArgumentInfo, elements: np.ndarray) -> None:
        """Keep what this schedule left in the argument."""
        if self._current is not None:
            self._current.arguments[argument.name] = argument
            self._current.outputs.setdefault(argument.name, []).append(elements)

    def on_launch_end(self, launch: LaunchInfo) -> None:
        """After the last schedule: compare the outputs bit for bit."""
        state = self._current
        if state is None:
            return
        schedules = int(launch.options.get("schedules", 1))
        if launch.options.get("schedule", 0) + 1 < schedules:
            return
        self._current = None
        if schedules < 2:
            self._single += 1
            return
        self._compared += 1
        accesses = list(self._accesses)
        for name, outputs in state.outputs.items():
            if len(outputs) == schedules:
                self._findings += self._compare(state, state.arguments[name], np.stack(outputs), accesses)

    def _compare(self, state: _Schedules, argument: ArgumentInfo, outputs: np.ndarray,
                 accesses: list[Access]) -> list[Finding]:  # fmt: skip
        view = argument.view_info()
        size = outputs.dtype.itemsize
        bits = outputs.view(f"u{size}") if size in (1, 2, 4, 8) else outputs  # NaNs compare by their bits
        differs = (bits != bits[:1]).any(axis=0)
        if not differs.any():
            return []
        coords = np.argwhere(differs)  # row-major order: the first is the lowest element
        offsets = (coords * np.array(view.strides or [0], np.int64)).sum(axis=1)
        address = view.address + offsets * view.itemsize
        region = int(state.map.locate(address[:1])[0])
        writers = state.writers.get(region)
        lo = state.map.regions[region].lo if region >= 0 else 0
        site_of = writers[address - lo] if writers is not None else np.full(address.size, -1)
        values = outputs[(slice(None), *coords.T)].astype(np.float64)  # (schedules, elements)
        floating = argument.dtype.startswith(("fp", "bf"))
        found = []
        for site in np.unique(site_of):
            take = site_of == site
            access = accesses[site] if site >= 0 else None
            first = coords[take][0]
            spread = values[:, take].max(axis=0) - values[:, take].min(axis=0)
            details = {
                "argument": argument.name, "elements": int(take.sum()), "lanes": int(take.sum()),
                "launches": 1,
                "first_element": first.tolist(), "element_text": element_text(view, tuple(first.tolist())),
                "values": values[:, take][:, 0].tolist(), "seeds": list(state.seeds),
                "max_spread": float(np.nanmax(spread)) if spread.size else 0.0,
                "access": access.text() if access else "",
                "tensor": {"name": view.name, "dtype": view.dtype, "shape": list(view.shape),
                           "strides": list(view.strides)},
            }  # fmt: skip
            hint = _hint(access, floating) if access else "no op of the launch wrote these elements"
            seen = zip(state.seeds, details["values"], strict=True)
            details["notes"] = [Note("values", ", ".join(f"seed {s}: {v:.9g}" for s, v in seen)).to_dict(),
                                Note("hint", hint).to_dict()]  # fmt: skip
            site_obj = access.site if access else None
            found.append(Finding(KIND, "error", headline(details), state.launch.kernel,
                                 site_obj.file if site_obj else "", site_obj.line if site_obj else 0,
                                 site_obj.column if site_obj else 0, [], details))  # fmt: skip
        return found

    def report(self) -> DeterminismReport:
        """Every nondeterministic output so far."""
        summary = {"launches": self._compared, "findings": len(self._findings),
                   "unchecked_launches": self._single}  # fmt: skip
        return DeterminismReport(self.name, list(self._findings), summary)

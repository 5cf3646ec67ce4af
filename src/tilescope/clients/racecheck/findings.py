"""Races as findings: one per (site pair, tensor), with counts, both sides named, and a hint.

Two unordered accesses have no order on the GPU, so the detector names them in a fixed one: the
access of the lower-numbered program comes *first*. A read after a write is a read-after-write
race, a write after a read write-after-read, two writes write-after-write; the finding's kind is
the one of its first conflict (lowest pair of programs, then lowest address), and ``kinds`` counts
all three.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir import LaunchInfo, OpKind, OpRecord, Site, ViewInfo, element_text
from ..base import Finding
from ..sanitizer.explain import Note
from ..sanitizer.programs import grid_rank, pid_text, program_ids, summarize

KIND = "data race"
RACES = {("write", "read"): "read-after-write", ("read", "write"): "write-after-read",
         ("write", "write"): "write-after-write"}  # fmt: skip


@dataclass(frozen=True)
class Access:
    """One access site as the detector knows it: where, what it does, and how (atomics)."""

    site: Site | None
    what: str  # "load", "store", "atomic add", "descriptor store", ...
    writes: bool
    atomic: bool
    sem: str = ""
    scope: str = ""

    def text(self) -> str:
        """``atomic add (sem=relaxed, scope=gpu)`` or ``store``."""
        return f"{self.what} (sem={self.sem}, scope={self.scope})" if self.atomic else self.what

    def to_dict(self, program: tuple[int, int, int], rank: int, argument: str | None = None,
                view: ViewInfo | None = None, address: int = 0) -> dict:  # fmt: skip
        """JSON-ready description of this side of a race in ``program``: through ``argument``
        (``view``, when it is a tensor argument) at byte ``address``, the element it touched."""
        s = self.site
        side = {"access": self.what, "atomic": self.atomic, "sem": self.sem or None,
                "scope": self.scope or None,
                "program": list(program), "program_text": pid_text(program, rank),
                "file": s.file if s else "", "line": s.line if s else 0, "column": s.column if s else 0,
                "source": s.source.strip() if s else "", "argument": argument}  # fmt: skip
        if view is not None:
            element = view.coordinates(address)
            side["element"] = list(element)
            side["element_text"] = element_text(view, element)
        return side


def access_of(record: OpRecord) -> Access:
    """The access site of a memory record (what it does, and its atomic semantics)."""
    kind = record.kind
    if kind is OpKind.ATOMIC:
        op = record.attrs.get("op", "")
        what = ("descriptor reduce " if record.attrs.get("descriptor") else "atomic ") + op
        return Access(record.site, what, op != "load", True, record.attrs.get("sem", ""),
                      record.attrs.get("scope", ""))  # fmt: skip
    what = kind.value.replace("_", " ")
    if record.attrs.get("gather"):
        what = "descriptor gather"
    elif record.attrs.get("scatter"):
        what = "descriptor scatter"
    return Access(record.site, what, record.writes, False)


def race_kind(first: Access, second: Access) -> str:
    """The race's kind when ``first`` comes first."""
    return RACES[("write" if first.writes else "read", "write" if second.writes else "read")]


def hint(first: Access, second: Access, atomics_ran: bool = False) -> str:
    """One line saying what usually fixes a race between these two accesses (``atomics_ran``: the
    launch ran atomics, so the accesses were perhaps meant to be ordered by a flag)."""
    if first.atomic or second.atomic:
        plain = second if first.atomic else first
        atom = first if first.atomic else second
        if atom.sem in ("relaxed",) or atom.scope == "cta" or not plain.writes:
            return ("publish with sem='release' (or acq_rel) at scope 'gpu' and read the flag with "
                    "sem='acquire' before touching the data, or make every access atomic")
        return f"make the {plain.what} atomic too (atomics only never race with atomics)"
    if first.writes and second.writes and first.site == second.site:
        return ("programs write the same elements: accumulate with an atomic add, or give each program "
                "its own tile")  # worded for every DSL: the finding's site shows the user's own code
    if first.writes and second.writes:
        return "two programs write the same elements: make the tiles disjoint or use atomics"
    if atomics_ran:
        return ("if an atomic flag or lock orders these accesses, publish it with sem='release' (or acq_rel) "
                "and read it with sem='acquire', at scope 'gpu' or 'sys': relaxed or cta-scope atomics "
                "order nothing between programs")
    return ("a program reads what another writes in the same launch: split the kernel into two launches, "
            "write to a separate output, or order them with a release/acquire flag")


@dataclass
class Pair:
    """Everything one (site pair, tensor) finding has seen."""

    sites: tuple[int, int]
    argument: str | None
    region: int = 0  # the shadow region (one tensor, or tensors that share bytes) the pair raced in
    lanes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    programs: set[int] = field(default_factory=set)
    first: tuple | None = None  # (order, first program, second program, address, first site, second site)

    def add(self, a_site: int, b_site: int, a_prog: np.ndarray, b_prog: np.ndarray, address: np.ndarray,
            accesses: list[Access]) -> None:  # fmt: skip
        """Count conflicts between lanes ``a`` (site ``a_site``) and ``b`` (``b_site``)."""
        lo = np.minimum(a_prog, b_prog)
        a_first = a_prog < b_prog
        first_site = np.where(a_first, a_site, b_site)
        second_site = np.where(a_first, b_site, a_site)
        self.lanes += int(lo.size)
        for fs in np.unique(np.stack([first_site, second_site], 1), axis=0):
            kind = race_kind(accesses[fs[0]], accesses[fs[1]])
            n = int(((first_site == fs[0]) & (second_site == fs[1])).sum())
            self.kinds[kind] = self.kinds.get(kind, 0) + n
        self.programs.update(np.unique(np.concatenate([a_prog, b_prog])).tolist())
        hi = np.maximum(a_prog, b_prog)
        i = int(np.lexsort((address, hi, lo))[0])
        candidate = ((int(lo[i]), int(hi[i]), int(address[i])), int(lo[i]), int(hi[i]), int(address[i]),
                     int(first_site[i]), int(second_site[i]))  # fmt: skip
        if self.first is None or candidate[0] < self.first[0]:
            self.first = candidate


def build(pair: Pair, accesses: list[Access], launch: LaunchInfo, views: dict[str, ViewInfo],
          arguments: dict[int, str | None], untracked: str, atomics_ran: bool) -> Finding:  # fmt: skip
    """The finding of one site pair and tensor (``untracked``: why happens-before was not tracked).

    ``views`` are the launch's tensor arguments by name, ``arguments`` the argument each site of
    the pair accessed the region through: each side names its own element (``details["sites"]``).
    """
    _, p_first, p_second, address, s_first, s_second = pair.first
    view = views.get(pair.argument) if pair.argument else None
    first, second = accesses[s_first], accesses[s_second]
    rank = grid_rank(launch.grid)
    pids = program_ids(np.array(sorted(pair.programs)), launch.grid)
    (pa,) = program_ids(np.array([p_first]), launch.grid)
    (pb,) = program_ids(np.array([p_second]), launch.grid)
    kind = race_kind(first, second)
    details: dict = {
        "race": kind,
        "kinds": dict(sorted(pair.kinds.items())),
        "argument": pair.argument,
        "lanes": pair.lanes,
        "launches": 1,
        "first": _side(first, pa, rank, arguments.get(s_first, pair.argument), views, view, address),
        "second": _side(second, pb, rank, arguments.get(s_second, pair.argument), views, view, address),
        "first_program": list(pb),
        "program_text": f"{pid_text(pa, rank)} and {pid_text(pb, rank)}",
        "programs": len(pids),
        "program_summary": summarize(pids, rank),
        "grid_rank": rank,
        "first_address": address,
        "seed": launch.options.get("seed"),
        "mode": launch.options.get("mode"),
        "hint": hint(first, second, atomics_ran),
    }
    if view is not None:
        element = view.coordinates(address)
        details["first_element"] = list(element)
        details["element_text"] = element_text(view, element)
        details["tensor"] = {"name": view.name, "dtype": view.dtype, "shape": list(view.shape),
                             "strides": list(view.strides)}  # fmt: skip
    details["sites"] = [details["first"], details["second"]]
    other = first.site
    details["other_site"] = f"{other.file}:{other.line}:{other.column}" if other else ""
    notes = [Note("first access", f"{first.text()} by program {pid_text(pa, rank)}: "
                  f"{other.source.strip() if other else '?'}", other.file if other else "",
                  other.line if other else 0),
             Note("hint", details["hint"])]  # fmt: skip
    if second.atomic:
        notes.insert(1, Note("this access", f"{second.text()} by program {pid_text(pb, rank)}"))
    found_in = f"mode={details['mode']!r}, seed={details['seed']} (the same options reproduce it)"
    notes.append(Note("found in", found_in))
    if untracked:
        notes.append(Note("note", f"happens-before was not tracked in this launch ({untracked}): "
                                  "atomics may order these accesses"))  # fmt: skip
    details["notes"] = [n.to_dict() for n in notes]
    site = second.site
    return Finding(kind=KIND, severity="error", message=headline(details), kernel=launch.kernel,
                   file=site.file if site else "", line=site.line if site else 0,
                   column=site.column if site else 0, program_ids=pids, details=details)  # fmt: skip


def _side(access: Access, program: tuple[int, int, int], rank: int, argument: str | None,
          views: dict[str, ViewInfo], fallback: ViewInfo | None, address: int) -> dict:  # fmt: skip
    """One side of a race, its element read through its own argument's view (the pair's tensor's
    when that view does not hold the address: an alias that covers other bytes)."""
    view = views.get(argument) if argument else None
    if view is None or not view.lo <= address < view.hi:
        view = fallback
        argument = fallback.name if fallback is not None else argument
    return access.to_dict(program, rank, argument, view, address)


def headline(details: dict) -> str:
    """``write-after-write race on `c` (float32[64, 64]): 4096 conflicting accesses in 4 programs``."""
    tensor = details.get("tensor")
    target = f"`{details.get('argument')}`"
    if tensor:
        target += f" ({tensor['dtype']}[{', '.join(map(str, tensor['shape']))}])"
    lanes, programs = int(details.get("lanes") or 0), int(details.get("programs") or 0)
    return (f"{details.get('race')} race on {target}: {lanes} conflicting access{'es' if lanes != 1 else ''} "
            f"between {programs} program{'s' if programs != 1 else ''}")

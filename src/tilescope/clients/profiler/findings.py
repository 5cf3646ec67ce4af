"""The profiler's findings: the actionable parts of a launch entry, as diagnostics at the source line.

Kinds: ``uncoalesced access`` (sector efficiency below :data:`EFFICIENCY_NOTE`; a warning below
:data:`EFFICIENCY_WARNING`), ``narrow access`` (the compiled kernel accesses fewer bytes per thread
than the addresses allow), ``redundant mask`` (proven true everywhere in the launch), ``masked
lanes`` (utilisation below :data:`UTILISATION_NOTE`), ``small grid`` (fewer programs than the GPU
has SMs or CUs), ``program order`` (a grouped order cuts one
wave's L2 footprint by at least :data:`FOOTPRINT_GAIN`), ``register spills`` (the offline compile
spilled). Counts in ``details`` (``launches``) add up when reports merge; ``details["elements"]``
marks where an uncoalesced access's sectors or a site's masked-off lanes are (:mod:`.places`).
"""

from __future__ import annotations

from ..base import Finding
from .report import live_text

EFFICIENCY_WARNING = 0.5
EFFICIENCY_NOTE = 0.8
UTILISATION_NOTE = 0.75
FOOTPRINT_GAIN = 0.2


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def _finding(kind: str, severity: str, message: str, launch: dict, site: dict | None,
             notes: list[dict], elements: str = "") -> Finding:  # fmt: skip
    """A finding at ``site`` (the launch's line when None); ``elements`` names the site entry's
    sample of elements where it happens (``wasted_elements``, ``masked_elements``)."""
    where = site or {"file": launch["file"], "line": launch["line"], "column": 0}
    details = {"argument": site.get("argument") if site else None, "launches": 1, "notes": notes}
    if site and elements and site.get(elements):
        details["elements"] = [{"argument": site["argument"], **e} for e in site[elements]]
    return Finding(kind, severity, message, launch["kernel"], where["file"], where["line"], where["column"],
                   [], details)  # fmt: skip


def _layout_text(site: dict) -> str:
    layout = site.get("layout") or {}
    held = layout.get("size_per_thread", [site["vector_width"]])[site["fast_axis"]] if site["shape"] else 1
    source = "the compiled kernel's layout" if layout.get("compiled") else "Triton's default layout"
    return (
        f"{source}: threads hold {held} consecutive element(s) along block axis {site['fast_axis']} of "
        f"{tuple(site['shape'])} and move {site['vector_width']} per instruction"
    )


#: Triton specialises integer arguments that are multiples of this (its divisibility hint)
DIVISIBILITY = 16


def _narrow_help(site: dict) -> str:
    """How to let the compiler vectorise an access: unspecialised mask bounds first, when they are why."""
    mask = site["mask"]
    odd = {k: v for k, v in mask.get("bounds", {}).items() if v % DIVISIBILITY}
    general = (
        "Triton vectorises what it can prove: sizes and strides it specialised as multiples of 16, "
        "offsets from tl.arange; pass such sizes (pad the tensor) or state what holds with "
        "tl.multiple_of / tl.max_contiguous"
    )
    if mask["present"] and not mask["redundant"] and odd:
        names = ", ".join(f"{k} = {v}" for k, v in odd.items())
        return (
            f"the mask compares with {names}, {'not a multiple' if len(odd) == 1 else 'not multiples'} of "
            f"{DIVISIBILITY}: Triton does not specialise such a bound, so it cannot prove the mask the same "
            "over a vector's lanes, however the tensor is padded; mask only the tail (an unmasked path for "
            "full blocks: a constexpr EVEN = n % BLOCK == 0 from `@triton.heuristics`, or a second launch "
            f"for the last block) or pass bounds that are multiples of {DIVISIBILITY}. Beyond the mask: "
            + general
        )
    return general


def _memory(launch: dict, site: dict) -> list[Finding]:
    out = []
    tensor = f"`{site['argument']}`" if site["argument"] else "memory"
    eff = site["efficiency"]
    # a scalar access (a reduction's one result per program) is one thread's, never a warp's to coalesce
    if eff is not None and eff < EFFICIENCY_NOTE and site["shape"]:
        pattern = site["pattern"]
        how = f"strided by {site['stride_bytes']} bytes" if pattern == "strided" else pattern
        notes = [
            {"label": "traffic", "text": f"{site['sectors_per_request']} sectors per request, "
             f"{_mib(site['moved_bytes'])} moved for {_mib(site['useful_bytes'])} used"},
            {"label": "layout", "text": _layout_text(site)},
        ]  # fmt: skip
        if pattern == "strided":
            notes.append({"label": "help", "text": "make neighbouring lanes read neighbouring elements: put "
                          "the stride-1 dimension of the tensor on the block's contiguous axis (transpose "
                          "the tile or the tensor's layout)"})  # fmt: skip
        out.append(_finding("uncoalesced access", "warning" if eff < EFFICIENCY_WARNING else "note",
                            f"{site['kind']} of {tensor} uses {eff:.1%} of the bytes it moves ({how})",
                            launch, site, notes, "wasted_elements"))  # fmt: skip
    compiled = site.get("compiled_vector_bytes")
    possible = site["achievable_vector_width"] * site["itemsize"]
    if compiled and compiled < possible:
        notes = [{"label": "help", "text": _narrow_help(site)}]
        message = (
            f"the compiled {site['kind']} of {tensor} moves {compiled} bytes per thread per "
            f"instruction where its addresses allow {possible} ({site['achievable_vector_width']} x "
            f"{site['dtype']}, contiguous and aligned in every program)"
        )
        out.append(_finding("narrow access", "note", message, launch, site, notes))
    mask = site["mask"]
    if mask["redundant"]:
        reason = f" ({mask['reason']})" if mask["reason"] else ""
        notes = [
            {"label": "mask", "text": f"`{mask['expression']}`", "line": mask["line"]},
            {"label": "help", "text": "drop `mask=` for launches like this one, or specialise on it: a "
             "constexpr flag from `@triton.heuristics` (e.g. EVEN_N = n % BLOCK == 0) selecting an "
             "unmasked path"},
        ]  # fmt: skip
        message = (
            f"the mask of this {site['kind']} of {tensor} is true for every lane of every program "
            f"in this launch{reason}"
        )
        out.append(_finding("redundant mask", "note", message, launch, site, notes))
    util = site["mask_utilisation"]
    if util is not None and util < UTILISATION_NOTE:
        message = (
            f"{site['kind']} of {tensor} enables {util:.1%} of its lanes ({site['active_lanes']} of "
            f"{site['lanes']})"
        )
        notes = [
            {"label": "help", "text": "a smaller block, or one shaped to the data, issues fewer idle lanes"}
        ]
        out.append(_finding("masked lanes", "note", message, launch, site, notes, "masked_elements"))
    return out


def live_notes(resources: dict) -> list[dict]:
    """A note naming the tiles live where the most registers are (from the compile's TTGIR)."""
    live = resources.get("live_tiles")
    if not live:
        return []
    return [{"label": "live", "text": live_text(live), "line": live["line"]}]


def launch_findings(launch: dict) -> list[Finding]:
    """The findings of one launch entry, in the order of its sites (most wasteful first)."""
    out = [f for site in launch["sites"] for f in _memory(launch, site)]
    reuse = launch.get("reuse")
    best = reuse and reuse.get("best_grouped")
    if best:
        now = reuse["launch_order"]["wave_bytes_mean"]
        gain = 1 - best["wave_bytes_mean"] / now if now else 0
        if gain >= FOOTPRINT_GAIN:
            out.append(_finding(
                "program order", "note",
                f"running programs in {best['name']} cuts one wave's L2 footprint from {_mib(now)} to "
                f"{_mib(best['wave_bytes_mean'])} ({gain:.0%} less; {reuse['wave_programs']} programs "
                "per wave)",
                launch, None,
                [{"label": "help", "text": "remap program ids as Triton's matmul tutorial does"}],
            ))  # fmt: skip
    programs = launch["grid"][0] * launch["grid"][1] * launch["grid"][2]
    units = launch.get("multiprocessors", 0)
    if 0 < programs < units:
        name = launch.get("multiprocessor", "SM") + "s"
        idle = f"{programs} programs < {units} {name}: the GPU is underused ({units - programs} {name} idle)"
        help_text = "smaller blocks (more programs), a split along another axis (split-K), or several"
        notes = [{"label": "help", "text": help_text + " problems in one launch"}]
        out.append(_finding("small grid", "note", idle, launch, None, notes))
    resources = launch.get("resources") or {}
    if resources.get("spill_bytes"):
        out.append(_finding(
            "register spills", "warning",
            f"the compiled kernel ({resources.get('target')}) spills {resources['spill_bytes']} bytes per "
            f"thread ({resources.get('registers')} registers)", launch, None,
            [*live_notes(resources),
             {"label": "help", "text": "smaller blocks, fewer stages, or more warps per program"}],
        ))  # fmt: skip
    return out

"""Register, spill and memory figures of a compiled kernel, read from the compiler's own reports.

NVIDIA: the ``ptxas -v`` log Triton's own ptxas run writes (so the figures come from exactly the
flags Triton used), plus SASS from ``cuobjdump -sass`` on the cubin. AMD: the AMDGPU metadata in the
AMDGCN assembly (``.vgpr_count``, ``.sgpr_count``, spill counts, scratch). Shared memory is Triton's
own figure (``metadata.shared``) on both. Standard library only: this runs in the environment under test.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_AMD_KEYS = {
    "vgprs": "vgpr_count",
    "sgprs": "sgpr_count",
    "agprs": "agpr_count",
    "vgpr_spills": "vgpr_spill_count",
    "sgpr_spills": "sgpr_spill_count",
    "scratch_bytes": "private_segment_fixed_size",
}


def from_ptxas_log(log: str) -> dict[str, int]:
    """``registers``, ``stack_bytes``, ``spill_store_bytes``, ``spill_load_bytes`` from a ``ptxas -v`` log."""
    out: dict[str, int] = {}
    regs = _PTXAS_REGS.findall(log)
    if regs:
        out["registers"] = int(regs[-1])
    frame = _PTXAS_FRAME.findall(log)
    if frame:
        stack, stores, loads = (int(x) for x in frame[-1])
        out.update(stack_bytes=stack, spill_store_bytes=stores, spill_load_bytes=loads)
    return out


_AMD_TOTAL_VGPRS = re.compile(r"^\s*; TotalNumVgprs: (\d+)", re.MULTILINE)


def from_amdgcn(asm: str) -> dict[str, int]:
    """VGPR/SGPR/AGPR counts, spill counts and scratch bytes from the AMDGPU metadata of ``asm``;
    ``vgprs`` is the whole unified register file a wave takes where the assembler says so
    (``TotalNumVgprs``: VGPRs aligned to 4, then AGPRs, on gfx90a and later)."""
    out = {}
    for name, key in _AMD_KEYS.items():
        found = re.findall(rf"^\s*(?:-\s+)?\.{key}:\s*(\d+)", asm, flags=re.MULTILINE)
        if found:
            out[name] = int(found[-1])
    total = _AMD_TOTAL_VGPRS.findall(asm)
    if total:
        out["vgprs"] = max(out.get("vgprs", 0), int(total[-1]))
    return out


def _cuobjdump(cubin: bytes, cuobjdump: str, flag: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        return subprocess.run(
            [cuobjdump, flag, str(path)], capture_output=True, text=True, check=True, timeout=120
        ).stdout


def sass(cubin: bytes, cuobjdump: str) -> str:
    """The SASS disassembly of ``cubin`` (``cuobjdump -sass``); raises CalledProcessError on failure."""
    return _cuobjdump(cubin, cuobjdump, "-sass")


_USAGE = re.compile(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def from_cubin(cubin: bytes, cuobjdump: str) -> dict[str, int]:
    """``registers``, ``stack_bytes``, ``static_shared_bytes``, ``local_bytes`` of the (first) kernel in
    ``cubin``, as ``cuobjdump --dump-resource-usage`` reports them (what the driver reads on load)."""
    found = _USAGE.search(_cuobjdump(cubin, cuobjdump, "--dump-resource-usage"))
    if not found:
        return {}
    regs, stack, shared, local = (int(x) for x in found.groups())
    return {"registers": regs, "stack_bytes": stack, "static_shared_bytes": shared, "local_bytes": local}


_LOC_DEF = re.compile(r"^#(loc\d*) = loc\((.*)\)\s*$", re.MULTILINE)
_LOC_FILE = re.compile(r'^"([^"]+)":(\d+):(\d+)$')
_LOC_NAMED = re.compile(r'^"([^"]*)"\(#(loc\d*)\)$')
_LOC_CALLSITE = re.compile(r"^callsite\(#(loc\d*) at #(loc\d*)\)$")
_LOCAL_ALLOC = re.compile(r"ttg\.local_alloc\b[^\n]*?-> !ttg\.memdesc<([0-9x]+)x([a-zA-Z][a-zA-Z0-9]*)[,>]"
                          r"[^\n]*loc\(#(loc\d*)\)")  # fmt: skip


def locations(ir: str) -> dict[str, tuple[str, str, int, int]]:
    """``loc`` aliases of an MLIR module -> (variable name, file, line, column), names followed inward
    (an inlined call's location is its call site's)."""
    raw = dict(_LOC_DEF.findall(ir))
    out: dict[str, tuple[str, str, int, int]] = {}

    def resolve(alias: str, depth: int = 0) -> tuple[str, str, int, int]:
        if alias in out or depth > 16:
            return out.get(alias, ("", "", 0, 0))
        text = raw.get(alias, "")
        found = _LOC_FILE.match(text)
        call = _LOC_CALLSITE.match(text)
        if found:
            result = ("", found.group(1), int(found.group(2)), int(found.group(3)))
        elif call:  # an inlined helper (tl.max, tl.sum): the line of the call in the kernel
            result = ("", *resolve(call.group(2), depth + 1)[1:])
        else:
            named = _LOC_NAMED.match(text)
            inner = resolve(named.group(2), depth + 1) if named else ("", "", 0, 0)
            result = (named.group(1) if named else "", *inner[1:])
        out[alias] = result
        return result

    for alias in raw:
        resolve(alias)
    return out


def _element_bytes(name: str) -> int:
    bits = re.search(r"\d+", name)
    return max(int(bits.group()) if bits else 32, 8) // 8


def shared_buffers(ttgir: str) -> list[dict]:
    """The shared-memory buffers a TTGIR module allocates (``ttg.local_alloc``), in program order: the
    source variable and line they hold, shape (a leading pipeline-stage axis when multi-buffered),
    element type and bytes."""
    where = locations(ttgir)
    out = []
    for dims, element, loc in _LOCAL_ALLOC.findall(ttgir):
        shape = [int(d) for d in dims.split("x")]
        name, file, line, column = where.get(loc, ("", "", 0, 0))
        size = _element_bytes(element)
        for d in shape:
            size *= d
        out.append({"name": name, "file": file, "line": line, "column": column, "shape": shape,
                    "dtype": element, "bytes": size})  # fmt: skip
    return out


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.MULTILINE)
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_PTX_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s*([^;]*);")
_PTX_WIDTH = re.compile(r"\.v(\d)\.[a-z]*(\d+)$|\.[a-z](\d+)$")


def _access_width(instruction: str, operands: str) -> tuple[str, int] | None:
    """(kind, bytes per thread) of a global-memory PTX instruction, else None."""
    op, _, modifiers = instruction.partition(".")
    if op == "cp" and modifiers.startswith("async."):
        size = re.search(r",\s*(0x[0-9a-fA-F]+|\d+)\s*(?:,|$)", operands)
        return ("load", int(size.group(1), 0)) if "global" in modifiers and size else None
    if op not in ("ld", "st", "red", "atom") or "global" not in modifiers:
        return None
    found = _PTX_WIDTH.search(modifiers)
    if not found:
        return None
    lanes, bits, scalar_bits = found.groups()
    width = int(lanes) * int(bits) // 8 if lanes else int(scalar_bits) // 8
    return ("load" if op == "ld" else "store" if op == "st" else "atomic"), width


def global_access_widths(ptx: str) -> dict[tuple[str, int, int], dict[str, int]]:
    """Widest global-memory access per thread (bytes) for each source location of a PTX module:
    ``{(file, line, column): {"load": bytes, "store": bytes, "atomic": bytes}}``.

    Accesses are ``ld.global``, ``st.global``, ``red``/``atom`` on global memory and ``cp.async`` (a
    global read into shared memory). An instruction belongs to every ``.loc`` since the previous
    instruction (the compiler emits a run of them for one expression); inside inline assembly (how
    Triton emits its loads and stores) the location is the one the block began with, since LLVM
    numbers the block's own lines onward from it.
    """
    files = dict(_PTX_FILE.findall(ptx))
    out: dict[tuple[str, int, int], dict[str, int]] = {}
    where: list[tuple[str, int, int]] = []
    fresh = True
    inline = False
    for text in ptx.splitlines():
        if "// begin inline asm" in text or "// end inline asm" in text:
            inline = "begin" in text
            continue
        loc = _PTX_LOC.match(text)
        if loc:
            if not inline:
                if not fresh:
                    where, fresh = [], True
                where.append((files.get(loc.group(1), ""), int(loc.group(2)), int(loc.group(3))))
            continue
        found = _PTX_INSTRUCTION.match(text)
        if not found:
            continue
        fresh = False
        access = _access_width(*found.groups())
        if access is None:
            continue
        kind, width = access
        for place in where:
            entry = out.setdefault(place, {})
            entry[kind] = max(entry.get(kind, 0), width)
    return out


_BLOCKED = re.compile(r"^#(blocked\d*) = #ttg\.blocked<\{sizePerThread = \[([\d, ]*)\], "
                      r"threadsPerWarp = \[([\d, ]*)\], warpsPerCTA = \[([\d, ]*)\], order = \[([\d, ]*)\]",
                      re.MULTILINE)  # fmt: skip
_MEMORY_OP = re.compile(r"\b(tt\.load|tt\.store|ttg\.async_copy_global_to_local|tt\.atomic_rmw|"
                        r"tt\.atomic_cas)\b.*?tensor<([0-9x]+)x!tt\.ptr<[^>]*>, #(blocked\d*)>.*"
                        r"loc\(#(loc\d*)\)\s*$",
                        re.MULTILINE)  # fmt: skip
_KINDS = {"tt.load": "load", "ttg.async_copy_global_to_local": "load", "tt.store": "store",
          "tt.atomic_rmw": "atomic", "tt.atomic_cas": "atomic"}  # fmt: skip


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def access_layouts(ttgir: str) -> dict[tuple[str, int, int, str], dict]:
    """The blocked layout of every global-memory op of a TTGIR module, by ``(file, line, column, kind)``:
    ``shape``, ``size_per_thread``, ``threads_per_warp``, ``warps_per_cta`` and ``order`` (fastest
    dimension first), i.e. which thread holds which element of the block when the op issues."""
    layouts = {name: {"size_per_thread": _ints(spt), "threads_per_warp": _ints(tpw),
                      "warps_per_cta": _ints(wpc), "order": _ints(order)}
               for name, spt, tpw, wpc, order in _BLOCKED.findall(ttgir)}  # fmt: skip
    where = locations(ttgir)
    out = {}
    for op, dims, layout, loc in _MEMORY_OP.findall(ttgir):
        if layout not in layouts or loc not in where:
            continue
        _, file, line, column = where[loc]
        out[(file, line, column, _KINDS[op])] = {"shape": _ints(dims.replace("x", ",")), **layouts[layout]}
    return out


_REDUCE = re.compile(r'"tt\.reduce"\(%[\w.]+\) <\{axis = (\d+) : i32\}>.*?\}\) : '
                     r"\(tensor<([0-9x]+)x\w+, #(\w+)>\) -> [^\n]*loc\(#(loc\d*)\)", re.S)  # fmt: skip
_LOC_CALLSITE = re.compile(r"^callsite\(#(loc\d*) at #(loc\d*)\)$")


def _user_lines(ir: str, library: str) -> dict[str, tuple[str, int]]:
    """``loc`` aliases -> (file, line) of the innermost frame outside ``library`` (a path fragment:
    Triton's language package), following names inward and call sites from callee to caller."""
    raw = dict(_LOC_DEF.findall(ir))
    frames: dict[str, list[tuple[str, int]]] = {}

    def chain(alias: str, depth: int = 0) -> list[tuple[str, int]]:
        if alias in frames or depth > 32:
            return frames.get(alias, [])
        text = raw.get(alias, "")
        found, named, call = _LOC_FILE.match(text), _LOC_NAMED.match(text), _LOC_CALLSITE.match(text)
        if found:
            result = [(found.group(1), int(found.group(2)))]
        elif named:
            result = chain(named.group(2), depth + 1)
        elif call:
            result = chain(call.group(1), depth + 1) + chain(call.group(2), depth + 1)
        else:
            result = []
        frames[alias] = result
        return result

    out = {}
    for alias in raw:
        user = [f for f in chain(alias) if library not in f[0]]
        if user:
            out[alias] = user[0]
    return out


def reduce_layouts(ttgir: str) -> list[dict]:
    """The blocked layout of each single-operand ``tt.reduce``'s input in a TTGIR module, with where
    it is in the user's source: ``file``, ``line``, ``shape``, ``axis``, ``size_per_thread``,
    ``threads_per_warp``, ``warps_per_cta``, ``order`` (a reduce of another layout is left out)."""
    layouts = {name: {"size_per_thread": _ints(spt), "threads_per_warp": _ints(tpw),
                      "warps_per_cta": _ints(wpc), "order": _ints(order)}
               for name, spt, tpw, wpc, order in _BLOCKED.findall(ttgir)}  # fmt: skip
    lines = _user_lines(ttgir, "/triton/language/")
    out = []
    for axis, dims, layout, loc in _REDUCE.findall(ttgir):
        if layout in layouts and loc in lines:
            file, line = lines[loc]
            shape = _ints(dims.replace("x", ","))
            out.append({"file": file, "line": line, "shape": shape, "axis": int(axis), **layouts[layout]})
    return out

"""Live ranges of a compiled kernel's register tiles, read from its TTGIR, mapped to source lines.

Every tensor-typed SSA value of the kernel's function gets its definition, its last use and a
per-thread register footprint from its layout; a sweep over the ops in program order then finds
where the most tile registers are live at once and which tiles they are. The model (documented in
``docs/profiler.md``):

* **Footprint.** Elements per thread from the layout: ``#ttg.blocked`` per dimension
  ``ceil(shape / (sizePerThread * threadsPerWarp * warpsPerCTA)) * sizePerThread``, at most the
  dimension (replicated copies of an element are one value); a slice is its parent's without the
  sliced dimension; an MMA accumulator ``instrM x instrN`` per warp and repetition, ``instrM *
  instrN / warp`` elements per thread each; a dot operand of an MMA is spread over the warps
  along its non-K dimension, of a blocked (FMA) dot over the parent's threads along that
  dimension with all of K; other layouts spread the elements evenly over the program's threads.
  Registers are 32-bit: ``ceil(elements * bits / 32)`` (a pointer is 64 bits, a mask 8).
* **Values that hold no registers of their own**: a broadcast, an ``expand_dims``, a reshape or a
  ``convert_layout`` to the same data re-label their source's registers (counted once, as the
  source); a splat of a scalar is one scalar; constants are immediates.
* **Ranges.** A value is live after its definition until its last use. A value defined outside a
  loop and used inside it stays live to the loop's end (every iteration reads it); loop-carried
  values are the loop's block arguments and yields. A pointer tile that is not loop-carried and is
  used in the loop it was made in counts only at its use: the backend sinks address arithmetic to
  the access.

This is an estimate of register pressure from the IR, before LLVM's and ptxas's own scheduling;
the compiled register count and spills stay the ground truth. Standard library only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .resources import locations

_VALUE = re.compile(r"%([\w$.-]+)(?:#(\d+))?")
_RESULT = re.compile(r"^\s*%([\w$.-]+)(?::(\d+))?\s*=\s*(\"?[\w.]+\"?)")
_OP = re.compile(r"^\s*(\"?[a-z_][\w.]*\"?)")
_LOC = re.compile(r"loc\(#(loc\d*)\)\s*$")
_LAYOUT_DEF = re.compile(r"^#(\w+) = (#[\w.]+<.*>)\s*$", re.MULTILINE)
_INTS = re.compile(r"\d+")
#: ops whose result re-labels its source's registers
_VIEWS = frozenset({"tt.broadcast", "tt.expand_dims", "tt.reshape", "ttg.convert_layout", "tt.trans",
                    "ttg.memdesc_trans"})  # fmt: skip
_LOOPS = frozenset({"scf.for", "scf.while"})
#: the most tiles listed at a peak
TOP = 8


@dataclass
class Value:
    """One tensor-typed SSA value."""

    name: str  #: SSA name (``acc_59#0``)
    shape: tuple[int, ...]
    element: str  #: MLIR element type (``f32``, ``!tt.ptr<f16>``, ``i1``)
    registers: int  #: 32-bit registers per thread it holds
    define: int  #: op position of its definition
    loc: str  #: location alias of its definition
    loop: int  #: the innermost loop (its op position) it is defined in, -1: none
    last: int = -1  #: op position of its last use
    carried: bool = False  #: a loop's block argument or yielded value
    uses: list[int] = field(default_factory=list)


def _split(text: str) -> list[str]:
    """Top-level comma-separated parts of ``text`` (brackets of every kind nest)."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _tensor(text: str) -> tuple[tuple[int, ...], str, str] | None:
    """(shape, element, layout) of a ``tensor<...>`` type, else None."""
    text = text.strip().strip("()")
    if not text.startswith("tensor<"):
        return None
    inner = text[len("tensor<") : text.rindex(">")]
    parts = _split(inner)
    dims = parts[0].split("x")
    shape, element = [], []
    for i, d in enumerate(dims):
        if d.isdigit() and not element:
            shape.append(int(d))
        else:
            element = dims[i:]
            break
    return tuple(shape), "x".join(element), parts[1] if len(parts) > 1 else ""


def _bits(element: str) -> int:
    if element.startswith("!tt.ptr"):
        return 64
    found = _INTS.search(element)
    return max(int(found.group()) if found else 32, 8)


def _numbers(layout: str, key: str) -> list[int]:
    found = re.search(rf"{key} = \[([\d, ]*)\]", layout)
    return [int(x) for x in found.group(1).split(",") if x.strip()] if found else []


def _expand(layout: str, layouts: dict[str, str]) -> str:
    """A layout with its alias (``#blocked1``) replaced by its definition."""
    layout = layout.strip()
    return layouts.get(layout.lstrip("#"), layout) if re.fullmatch(r"#\w+", layout) else layout


def _parent(layout: str) -> str:
    found = re.search(r"parent = (#[\w.]+(?:<\{.*\}>)?)", layout)
    return found.group(1) if found else ""


def elements_per_thread(shape: tuple[int, ...], layout: str, layouts: dict[str, str], threads: int,
                        warp: int) -> int:  # fmt: skip
    """Distinct elements of a ``shape`` tile each thread holds in ``layout`` (module docstring)."""
    layout = _expand(layout, layouts)
    numel = math.prod(shape)
    if layout.startswith("#ttg.blocked"):
        spt, tpw, wpc = (_numbers(layout, k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"))
        if len(spt) == len(shape):
            per_dim = zip(shape, spt, tpw, wpc, strict=True)
            return math.prod(min(-(-n // (s * t * w)) * s, n) for n, s, t, w in per_dim)
    if layout.startswith("#ttg.slice"):
        dim = int(re.search(r"dim = (\d+)", layout).group(1))
        full = (*shape[:dim], 1, *shape[dim:])
        return elements_per_thread(full, _parent(layout), layouts, threads, warp)
    if "_mma<" in layout or "mfma<" in layout or "wmma<" in layout:
        wpc = _numbers(layout, "warpsPerCTA")
        instr = _numbers(layout, "instrShape")[:2] or [16, 8]
        if len(shape) == 2 and len(wpc) == 2:
            reps = math.prod(-(-n // (i * w)) for n, i, w in zip(shape, instr, wpc, strict=True))
            return reps * max(1, instr[0] * instr[1] // warp)
    if layout.startswith("#ttg.dot_op") and len(shape) == 2:
        index = int(re.search(r"opIdx = (\d+)", layout).group(1))
        parent = _expand(_parent(layout), layouts)
        keep = 0 if index == 0 else 1  # the operand's non-K dimension
        k = shape[1 - keep]
        if parent.startswith("#ttg.blocked"):
            spt, tpw, wpc = (_numbers(parent, x) for x in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"))
            n = shape[keep]
            return min(-(-n // (spt[keep] * tpw[keep] * wpc[keep])) * spt[keep], n) * k
        wpc = _numbers(parent, "warpsPerCTA")
        if len(wpc) == 2:
            return max(1, numel // (warp * wpc[keep]))
    return max(1, -(-numel // threads))


def _registers(elements: int, element: str) -> int:
    return -(-elements * _bits(element) // 32)


@dataclass
class _Op:
    position: int
    name: str
    results: list[str]
    uses: list[str]
    loc: str
    line: str
    closes: bool = False  #: the line that closes a region (named after the region's op)


@dataclass
class _Body:
    """A function body's ops in program order, and its region structure."""

    ops: list[_Op]
    loop_end: dict[int, int]  #: loop op position -> position of the line that closes it
    loop_of: dict[int, int]  #: op position -> innermost enclosing loop's position (-1: none)
    closing: dict[int, str]  #: region op position -> the line that closes its region
    closed_at: dict[int, int] = field(default_factory=dict)  #: region op position -> that line's position


def _body(function: str) -> _Body:
    """Split a function's text into ops; ``}`` lines are ops too (a loop's results exist there)."""
    body = _Body([], {}, {}, {})
    stack: list[tuple[int, str]] = []  # (op position, op name) of the open regions
    for text in function.splitlines():
        line = text.strip()
        if not line or line.startswith(("^bb", "tt.func", "module")):
            continue
        position = len(body.ops)
        loc_found = _LOC.search(line)
        loc = loc_found.group(1) if loc_found else ""
        if line.startswith("}"):
            opened = stack.pop() if stack else (-1, "")
            if opened[1] in _LOOPS:
                body.loop_end[opened[0]] = position
            if opened[0] >= 0:
                body.closing[opened[0]] = line
                body.closed_at[opened[0]] = position
                if not body.ops[opened[0]].loc:
                    body.ops[opened[0]].loc = loc
            if line.endswith("{"):  # "} else {", "} do {"
                stack.append(opened)
            body.loop_of[position] = next((p for p, name in reversed(stack) if name in _LOOPS), -1)
            name = body.ops[opened[0]].name if opened[0] >= 0 else ""
            body.ops.append(_Op(position, name, [], [], loc, line, closes=True))
            continue
        body.loop_of[position] = next((p for p, name in reversed(stack) if name in _LOOPS), -1)
        result = _RESULT.match(line)
        if result:
            name, count, op = result.group(1), int(result.group(2) or 1), result.group(3).strip('"')
            results, rest = [f"{name}#{i}" for i in range(count)], line[result.end() :]
        else:
            found = _OP.match(line)
            op, results, rest = (found.group(1).strip('"') if found else ""), [], line
        uses = [f"{n}#{i or 0}" for n, i in _VALUE.findall(rest)]
        body.ops.append(_Op(position, op, results, uses, "" if line.endswith("{") else loc, line))
        if line.endswith("{"):
            stack.append((position, op))
    return body


def _result_types(op: _Op, closing: str) -> list[str]:
    """The result types of ``op`` (``closing``: the line that closes its region, for region ops)."""
    text = op.line
    if op.name in _LOOPS or op.name == "scf.if":
        found = re.search(r"->\s*\((.*)\)\s*(?::|\{)", text) or re.search(r"->\s*(tensor<.*>)\s*\{", text)
        return _split(found.group(1)) if found else []
    if text.endswith("{") and closing:
        text = closing
    text = re.sub(r"\s*loc\(#loc\d*\)\s*$", "", text)
    if "->" in text:
        return _split(text.rsplit("->", 1)[1])
    if " : " not in text:
        return []
    types = _split(text.rsplit(" : ", 1)[1])
    tensor = _tensor(types[-1]) if types else None
    if op.name == "tt.load" and tensor:  # the type shown is the pointers'
        pointee = re.match(r"!tt\.ptr<(.*)>", tensor[1])
        return [
            f"tensor<{'x'.join(map(str, tensor[0]))}x{pointee.group(1) if pointee else 'f32'}, {tensor[2]}>"
        ]
    if op.name == "tt.addptr":  # (pointers, offsets): the result is the pointers
        return types[:1]
    if op.name in ("arith.cmpi", "arith.cmpf") and tensor:
        return [f"tensor<{'x'.join(map(str, tensor[0]))}xi1, {tensor[2]}>"]
    return types if len(op.results) > 1 else types[-1:]


def _module_int(ttgir: str, key: str, default: int) -> int:
    found = re.search(rf'"{re.escape(key)}" = (\d+)', ttgir)
    return int(found.group(1)) if found else default


def live_tiles(ttgir: str) -> dict:
    """Where a TTGIR module's tiles hold the most registers at once, and which tiles those are.

    Returns ``peak_registers`` (32-bit registers per thread of the tiles live there), the peak's
    ``file``, ``line``, ``column`` and ``op``, and ``live``: the largest tiles live there (at most
    :data:`TOP`), each ``name``, ``shape``, ``dtype``, ``registers``, and the source ``line`` of its
    definition and ``last_use_line`` (``file`` too). Empty when the module has no tensors.
    """
    layouts = dict(_LAYOUT_DEF.findall(ttgir))
    warp = _module_int(ttgir, "ttg.threads-per-warp", 32)
    threads = _module_int(ttgir, "ttg.num-warps", 4) * warp
    where = locations(ttgir)
    start = ttgir.find("tt.func")
    if start < 0:
        return {}
    body = _body(ttgir[start:])
    values: dict[str, Value] = {}
    alias: dict[str, str] = {}  # a view -> the value whose registers it re-labels
    for op in body.ops:
        if op.closes:
            continue
        for use in op.uses:
            value = values.get(alias.get(use, use))
            if value is not None and value.define <= op.position:
                value.uses.append(op.position)
                value.carried |= op.name == "scf.yield"
        types = _result_types(op, body.closing.get(op.position, ""))
        define = body.closed_at.get(op.position, op.position)  # a region op's results exist after it
        if op.name == "scf.for" and "iter_args(" in op.line:  # block arguments: live inside the loop
            arguments = re.findall(r"%([\w$.-]+) = %", op.line.split("iter_args(", 1)[1])
            for name, type_text in zip(arguments, types, strict=False):
                _add(values, f"{name}#0", type_text, op, op.position, body, layouts, threads, warp, True)
        for name, type_text in zip(op.results, types, strict=False):
            source = alias.get(op.uses[0], op.uses[0]) if op.uses else ""
            if op.name in _VIEWS and source in values:
                alias[name] = source
            else:
                _add(values, name, type_text, op, define, body, layouts, threads, warp, False)
    if not values:
        return {}
    change = [0] * (len(body.ops) + 1)
    for value in values.values():
        value.last = _last_use(value, body)
        if value.element.startswith("!tt.ptr") and not value.carried:
            value.registers = 0  # the backend computes these addresses at the access, a vector at a time
        if value.registers and value.last > value.define:
            change[value.define] += value.registers
            change[value.last] -= value.registers
    running, peak, at = 0, 0, 0
    for position in range(len(body.ops)):
        running += change[position]
        if running > peak:
            peak, at = running, position
    present = sorted((v for v in values.values() if v.registers and v.define <= at < v.last),
                     key=lambda v: (-v.registers, v.define, v.name))  # fmt: skip
    _, file, line, column = where.get(body.ops[at].loc, ("", "", 0, 0))
    return {
        "peak_registers": peak,
        "file": file,
        "line": line,
        "column": column,
        "op": body.ops[at].name,
        "live": [_entry(v, body, where) for v in present[:TOP]],
    }


def _add(values: dict, name: str, type_text: str, op: _Op, define: int, body: _Body, layouts: dict,
         threads: int, warp: int, carried: bool) -> None:  # fmt: skip
    """Record a result (or a loop's block argument) of tensor type."""
    tensor = _tensor(type_text)
    if tensor is None:
        return
    shape, element, layout = tensor
    if carried:
        registers = _registers(elements_per_thread(shape, layout, layouts, threads, warp), element)
    elif op.name == "arith.constant":
        registers = 0  # immediates
    elif op.name == "tt.splat":
        registers = _registers(1, element)
    else:
        registers = _registers(elements_per_thread(shape, layout, layouts, threads, warp), element)
    values[name] = Value(name, shape, element, registers, define, op.loc, body.loop_of.get(define, -1),
                         carried=carried)  # fmt: skip


def _last_use(value: Value, body: _Body) -> int:
    """The value's last use; a use inside a loop the value was made before keeps it to the loop's end."""
    last = max(value.uses, default=value.define)
    for use in value.uses:
        loop = body.loop_of.get(use, -1)
        while loop >= 0:
            if value.define < loop:
                last = max(last, body.loop_end.get(loop, last))
            loop = body.loop_of.get(loop, -1)
    return last


def _entry(value: Value, body: _Body, where: dict) -> dict:
    name, file, line, _ = where.get(value.loc, ("", "", 0, 0))
    if value.carried and body.ops[value.define].name in _LOOPS or not name:
        # a loop's block argument has the loop's location; its SSA name is the variable's
        name = re.sub(r"_\d+$", "", value.name.split("#")[0])
    used = max(value.uses, default=value.define)
    last_loc = body.ops[used].loc if 0 <= used < len(body.ops) else ""
    return {"name": name, "shape": list(value.shape), "dtype": value.element,
            "registers": value.registers, "file": file, "line": line,
            "last_use_line": where.get(last_loc, ("", "", 0, 0))[2]}  # fmt: skip

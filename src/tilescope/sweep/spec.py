"""A sweep's spec file (TOML): which case functions to call over which axes, under which clients.

``load(path)`` reads and validates a spec and returns a :class:`Spec`; ``Spec.cells()`` expands
it into one :class:`Cell` per point of each kernel's axes (the product of its shapes, dtypes,
constexprs and configs). Errors name the file, the key and what is allowed (docs/sweep.md has the
schema).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: keys of ``[sweep]`` and of each ``[[kernel]]`` table
SWEEP_KEYS = ("name", "clients", "timeout", "grace", "memory", "path", "options")
KERNEL_KEYS = ("name", "case", "shapes", "dtypes", "constexprs", "configs")
#: dtype names a ``dtypes`` axis may hold (the case function maps them to its framework's dtypes)
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float8_e4m3fn", "float8_e5m2", "float16", "bfloat16", "float32", "float64")
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20, "mib": 2**20,
          "g": 2**30, "gb": 2**30, "gib": 2**30, "t": 2**40, "tb": 2**40, "tib": 2**40}


class SpecError(ValueError):
    """A sweep spec that cannot be run; the message names the file and the key."""


@dataclass(frozen=True)
class Cell:
    """One job of a sweep: call ``case`` with ``params`` (shape, dtype, constexprs, config)."""

    kernel: str
    case: str
    params: dict
    path: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """A readable, stable name: ``softmax[shape=3x5000, dtype=float16]``."""
        return f"{self.kernel}[{', '.join(f'{k}={_text(v)}' for k, v in self.params.items())}]"

    @property
    def key(self) -> str:
        """A short hash of the kernel and its parameters (the cell's file name in a results folder)."""
        text = json.dumps([self.kernel, self.case, self.params], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        """JSON-ready dict (what a worker needs to run the cell: it re-imports ``case`` by name)."""
        return {"kernel": self.kernel, "case": self.case, "params": self.params, "path": list(self.path)}

    @classmethod
    def from_dict(cls, d: dict) -> Cell:
        """The cell of :meth:`to_dict`'s output (shapes back as tuples)."""
        params = {k: tuple(v) if k == "shape" else v for k, v in d["params"].items()}
        return cls(d["kernel"], d["case"], params, tuple(d.get("path", ())))


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return "x".join(map(str, value))
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)


@dataclass
class Kernel:
    """One ``[[kernel]]`` table: a case function and its axes."""

    name: str
    case: str
    axes: dict[str, list] = field(default_factory=dict)


@dataclass
class Spec:
    """A validated sweep spec."""

    source: str
    name: str
    clients: list[str]
    timeout: float | None
    grace: float
    memory: int | None
    path: tuple[str, ...]
    options: dict
    kernels: list[Kernel]

    def cells(self) -> list[Cell]:
        """One cell per point of each kernel's axes, kernels in file order, axes varying last-first."""
        out = []
        for kernel in self.kernels:
            names = list(kernel.axes)
            for values in itertools.product(*(kernel.axes[n] for n in names)):
                out.append(Cell(kernel.name, kernel.case, dict(zip(names, values, strict=True)), self.path))
        return out


def load(path: str | os.PathLike) -> Spec:
    """The spec in TOML file ``path``, validated (:class:`SpecError` names the bad key)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"{path}: no such sweep spec") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    return parse(data, str(path), path.parent)


def parse(data: dict, source: str = "<spec>", base: str | os.PathLike = ".") -> Spec:
    """A :class:`Spec` from already-parsed TOML ``data``; relative ``path`` folders are under ``base``."""
    at = _Where(source)
    _only(data, ("sweep", "kernel"), at, "the top level")
    sweep = data.get("sweep", {})
    _kind(sweep, dict, at("sweep"), "a table")
    _only(sweep, SWEEP_KEYS, at, "[sweep]")
    clients = sweep.get("clients", ["sanitizer"])
    if isinstance(clients, str):
        clients = [c.strip() for c in clients.split(",") if c.strip()]
    _list_of(clients, str, at("sweep.clients"), "client names")
    _check_clients(clients, at("sweep.clients"))
    timeout = sweep.get("timeout", 300)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise SpecError(f"{at('sweep.timeout')}: seconds per cell, a number >= 0 (0: no limit; "
                        f"got {timeout!r})")
    grace = sweep.get("grace", 10)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or grace < 0:
        raise SpecError(f"{at('sweep.grace')}: seconds a cell may run past its timeout before its worker "
                        f"is ended, a number >= 0 (got {grace!r})")
    memory = _bytes(sweep["memory"], at("sweep.memory")) if "memory" in sweep else None
    folders = sweep.get("path", [])
    _list_of(folders, str, at("sweep.path"), "folders")
    options = sweep.get("options", {})
    _kind(options, dict, at("sweep.options"), "a table of tilescope.trace options")
    _check_options(options, clients, at("sweep.options"))
    kernels = data.get("kernel")
    if not kernels:
        raise SpecError(f"{source}: no [[kernel]] tables; a sweep needs at least one "
                        '(case = "module:function" and its axes)')
    _kind(kernels, list, at("kernel"), "an array of tables ([[kernel]])")
    parsed = [_kernel(k, i, at) for i, k in enumerate(kernels)]
    names = [k.name for k in parsed]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SpecError(f"{source}: kernel name{'s' if len(twice) > 1 else ''} {', '.join(twice)} used "
                        "twice; give each [[kernel]] its own name =")
    return Spec(source, str(sweep.get("name", Path(source).stem)), clients,
                float(timeout) or None, float(grace), memory,
                tuple(os.path.abspath(os.path.join(base, f)) for f in folders), options, parsed)


class _Where:
    """``file: key`` prefixes for error messages."""

    def __init__(self, source: str):
        self.source = source

    def __call__(self, key: str) -> str:
        return f"{self.source}: {key}"


def _only(table: dict, allowed: tuple[str, ...], at: _Where, where: str) -> None:
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise SpecError(f"{at.source}: unknown key{'s' if len(unknown) > 1 else ''} "
                        f"{', '.join(map(repr, unknown))} in {where}; allowed: {', '.join(allowed)}")


def _kind(value: Any, kind: type, where: str, what: str) -> None:
    if not isinstance(value, kind):
        raise SpecError(f"{where}: must be {what} (got {type(value).__name__} {value!r})")


def _list_of(value: Any, kind: type, where: str, what: str, nonempty: bool = False) -> None:
    if not isinstance(value, list) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise SpecError(f"{where}: must be a list of {what} (got {value!r})")
    if nonempty and not value:
        raise SpecError(f"{where}: an empty axis makes no cells; give at least one value")


def _bytes(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(digits):]
        try:
            number = float(digits)
        except ValueError:
            number = -1
        if unit in _UNITS and number > 0:
            return int(number * _UNITS[unit])
    raise SpecError(f"{where}: bytes a cell may add, an integer or a size such as \"2GiB\" or \"512MB\" "
                    f"(got {value!r})")


def _check_clients(clients: list[str], where: str) -> None:
    from ..clients import available

    known = available()
    if "tracer" in clients:
        raise SpecError(f"{where}: the tracer writes one trace folder per process and traces do not merge; "
                        "trace one cell with `tilescope run -c tracer` instead")
    unknown = [c for c in clients if c not in known]
    if unknown:
        raise SpecError(f"{where}: unknown client{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                        f"known clients: {', '.join(sorted(known))}")


def _check_options(options: dict, clients: list[str], where: str) -> None:
    from ..clients import client_options
    from ..tracing import ENGINE_OPTIONS

    allowed = {*ENGINE_OPTIONS, *client_options(clients), "config", "autotune", "debug", "sanitize_overflow"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise SpecError(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                        f"options are {', '.join(sorted(allowed))}")


def _kernel(table: Any, index: int, at: _Where) -> Kernel:
    here = f"kernel[{index}]"
    _kind(table, dict, at(here), "a table")
    _only(table, KERNEL_KEYS, at, f"[[kernel]] #{index + 1}")
    case = table.get("case")
    if not isinstance(case, str) or case.count(":") != 1 or not all(case.split(":")):
        raise SpecError(f'{at(here + ".case")}: must be "module.path:function" (got {case!r}); the '
                        "function is called once per cell with the cell's axes as keyword arguments")
    name = table.get("name", case.split(":")[1])
    _kind(name, str, at(here + ".name"), "a string")
    here = f"kernel {name!r}"
    axes: dict[str, list] = {}
    if "shapes" in table:
        axes["shape"] = _shapes(table["shapes"], at(here + ".shapes"))
    if "dtypes" in table:
        dtypes = table["dtypes"]
        _list_of(dtypes, str, at(here + ".dtypes"), "dtype names", nonempty=True)
        bad = [d for d in dtypes if d not in DTYPES]
        if bad:
            raise SpecError(f"{at(here + '.dtypes')}: unknown dtype{'s' if len(bad) > 1 else ''} "
                            f"{', '.join(bad)}; allowed: {', '.join(DTYPES)}")
        axes["dtype"] = list(dtypes)
    constexprs = table.get("constexprs", {})
    _kind(constexprs, dict, at(here + ".constexprs"), "a table of name = [values]")
    for key, values in constexprs.items():
        if key in ("shape", "dtype", "config"):
            raise SpecError(f"{at(here + '.constexprs.' + key)}: {key!r} is the name of a built-in axis; "
                            "rename the constexpr")
        where = at(f"{here}.constexprs.{key}")
        _list_of(values, (int, float, str), where, "values (integers, numbers or strings)", nonempty=True)
        axes[key] = list(values)
    if "configs" in table:
        configs = table["configs"]
        _list_of(configs, dict, at(here + ".configs"), "tables (one per config)", nonempty=True)
        axes["config"] = [dict(c) for c in configs]
    if not axes:
        raise SpecError(f"{at(here)}: no axes; give shapes, dtypes, constexprs or configs")
    return Kernel(name, case, axes)


def _shapes(value: Any, where: str) -> list[tuple[int, ...]]:
    """A ``shapes`` axis: shapes (lists of sizes) and ``{product = [[sizes], ...]}`` tables of them."""
    if not isinstance(value, list) or not value:
        raise SpecError(f"{where}: must be a non-empty list of shapes ([4, 100]) or "
                        "{product = [[1, 4], [100, 128]]} tables (got {value!r})")
    out: list[tuple[int, ...]] = []
    for item in value:
        if isinstance(item, dict):
            if set(item) != {"product"}:
                raise SpecError(f"{where}: a table in shapes takes one key, product (got {sorted(item)})")
            dims = item["product"]
            if not isinstance(dims, list) or not dims:
                raise SpecError(f"{where}: product must be a list of size lists, one per dimension")
            for sizes in dims:
                _sizes(sizes, where)
            out += list(itertools.product(*dims))
        else:
            _sizes(item, where)
            out.append(tuple(item))
    return out


def _sizes(sizes: Any, where: str) -> None:
    if not isinstance(sizes, list) or not sizes or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes):
        raise SpecError(f"{where}: sizes are a non-empty list of integers >= 0 (got {sizes!r})")

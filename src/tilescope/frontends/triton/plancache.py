"""An on-disk cache of the language layer's plans (:mod:`tape`), so a fresh process replays them.

The tape records, per builtin call (builtin, argument types and constants), the builder calls
Triton's semantic layer makes, and replays them on later calls; in memory, so every process ran the
semantic layer again for each distinct call (about 4 ms of a small kernel's first launch). Here the
plans a kernel's first launch in a process used are kept on disk, one file per kernel (its file and
qualified name) and builder configuration, and loaded into the tape at that kernel's first launch in
a later process, as Triton keeps its compiled kernels. A plan depends on its call alone, not on the
kernel (the tape shares it between kernels): an edited kernel, other constexprs or dtypes make
other calls, which miss and are recorded; a file that lists plans the kernel no longer uses only
costs their load. A loaded plan is looked up and replayed exactly as one recorded in this process.

Key: the sources of the modules that decide the builder calls or their replay (the tape, the
builder, the type map, the semantic subclass in ``version.py``, the runtime's patches, this
module), tilescope's and Triton's versions, Python's bytecode magic, and the builder's
``options_key`` (its options and the ``TRITON_F32_DEFAULT`` knob).

Format: a digest of the file's name and body, then the body: one :mod:`pickle` of the plans (key,
builder calls, result), restricted to plain Python data (tuples, lists, dicts, numbers, strings)
and a closed set of objects, each written as a call of one of this module's restorers: engine
dtypes and Triton's scalar dtypes by name (so they come back as the same singletons: Triton
compares some by identity, ``element_ty is tl.float16``), Triton's type and constexpr objects by
class (from an allow-list) and attributes, enum members by class and name, builtins by module and
qualified name (resolved back to the original function the tape keys with). A plan is stored only
if it reads back as itself (written again, the same pickle); one holding anything else stays in
memory, as before. Loading resolves only those restorers, never any other global. As the rewrite
cache: entries are only read from the user's own cache directory, written atomically, and a file
that does not load (torn, altered, renamed, from another version) is ignored and replaced by the
next store.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import io
import pickle
import sys
import types
from typing import Any

import triton
from triton._C.libtriton import ir
from triton.language import core as tl_core

from ...engine import dtypes
from ...engine.dtypes import BlockType, DType
from . import codecache
from .tape import Plan, Tape

#: the modules whose source decides the recorded builder calls or how they replay
_DEPENDS = ("tape.py", "builder.py", "typemap.py", "version.py", "runtime.py", "plancache.py")
#: plans kept per file; past it a file keeps only the plans of the launch that stores it
MAX_PLANS = 4096
_PREFIX = "plans-"
_DIGEST = 32  # bytes of a file's leading digest


@functools.cache
def _tables() -> dict[str, dict[str, Any]]:
    """What a file may name: classes (as key parts), Triton objects rebuilt from their attributes,
    Triton's scalar dtype singletons, enum classes."""
    scalars = (int, bool, str, float, type(None))
    core_types = [
        c for c in vars(tl_core).values() if isinstance(c, type) and issubclass(c, tl_core.base_type)
    ]
    plain = (tl_core.dtype, tl_core.pointer_type, tl_core.block_type, tl_core.tuple_type)
    plain += (tl_core.constexpr_type, tl_core.constexpr, tl_core.tuple)
    enums = {f"ir.{n}": c for n, c in vars(ir).items() if isinstance(c, enum.EnumMeta)}
    enums.update({"dtype.SIGNEDNESS": tl_core.dtype.SIGNEDNESS, "dtype.KIND": tl_core.dtype.KIND})
    return {
        "class": {c.__name__: c for c in (*scalars, *core_types)},
        "object": {c.__name__: c for c in plain},
        "scalar": {v.name: v for v in vars(tl_core).values() if type(v) is tl_core.dtype},
        "enum": enums,
    }


class _NotCached(Exception):
    """A plan holds something this cache does not represent."""


def _name_of(table: str, value: Any) -> str:
    for name, known in _tables()[table].items():
        if known is value:
            return name
    raise _NotCached(value)


class _Pickler(pickle.Pickler):
    """Writes plain data natively and every other object as a call of a restorer (or refuses it)."""

    def __init__(self, file: io.BytesIO, runtime: Any):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.runtime = runtime

    def reducer_override(self, obj: Any) -> Any:
        """How ``obj`` is written: ``(restorer, arguments)``; anything not listed raises _NotCached."""
        kind = type(obj)
        if kind is types.FunctionType and _RESTORERS.get(obj.__qualname__) is obj:
            return NotImplemented  # a restorer itself: written as a global, by name
        if kind is DType:
            if dtypes.named(obj.name) is not obj:
                raise _NotCached(obj)
            return _Unpickler.engine_dtype, (obj.name,)
        if kind is BlockType:
            return _Unpickler.block_type, (obj.element, obj.shape)
        if isinstance(obj, type):
            return _Unpickler.type_class, (_name_of("class", obj),)
        if isinstance(obj, enum.Enum):
            cls = _name_of("enum", kind)
            if kind[obj.name] is not obj:
                raise _NotCached(obj)
            return _Unpickler.enum_member, (cls, obj.name)
        if kind is tl_core.dtype and _tables()["scalar"].get(obj.name) is obj:
            return _Unpickler.triton_scalar, (obj.name,)
        if kind.__name__ in _tables()["object"] and _tables()["object"][kind.__name__] is kind:
            return _Unpickler.triton_object, (kind.__name__, dict(vars(obj)))
        if callable(obj) and self.runtime.builtin(obj) is obj:
            where = (obj.__module__, obj.__qualname__)
            if _builtin(self.runtime, *where) is not obj:
                raise _NotCached(obj)
            return _Unpickler.builtin, where
        raise _NotCached(obj)


def _builtin(runtime: Any, module: str, qualname: str) -> Any:
    """The builtin ``module.qualname`` names, as the tape keys it (None: not one of Triton's builtins)."""
    if not module.startswith("triton.") or module not in sys.modules:
        return None
    value: Any = sys.modules[module]
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return runtime.builtin(value)


class _Unpickler(pickle.Unpickler):
    """Resolves only this module's restorers; each checks what it is given against its table."""

    def __init__(self, data: bytes, runtime: Any):
        super().__init__(io.BytesIO(data))
        self.runtime = runtime

    def find_class(self, module: str, name: str) -> Any:
        """One of the restorers below, bound to this load (any other global is refused)."""
        if module == __name__ and name in _RESTORERS:
            return getattr(self, name.rpartition(".")[2])
        raise pickle.UnpicklingError(f"{module}.{name} is not a plan cache restorer")

    def engine_dtype(self, name: str) -> DType:
        """An engine dtype (the singleton of its name)."""
        return dtypes.named(name)

    def block_type(self, element: DType, shape: tuple) -> BlockType:
        """An engine block type."""
        if type(element) is not DType or type(shape) is not tuple:
            raise pickle.UnpicklingError("malformed block type")
        return BlockType(element, shape)

    def type_class(self, name: str) -> type:
        """A class the tape keys with (Python's scalars, Triton's types)."""
        return _tables()["class"][name]

    def enum_member(self, cls: str, name: str) -> enum.Enum:
        """An enum member (Triton IR's, a dtype's signedness)."""
        return _tables()["enum"][cls][name]

    def triton_scalar(self, name: str) -> Any:
        """One of Triton's scalar dtype singletons (``tl.float32``)."""
        return _tables()["scalar"][name]

    def triton_object(self, cls: str, state: dict) -> Any:
        """A Triton type or constexpr object of an allowed class, rebuilt from its attributes."""
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise pickle.UnpicklingError("malformed object state")
        kind = _tables()["object"][cls]
        obj = kind.__new__(kind)
        obj.__dict__.update(state)
        return obj

    def builtin(self, module: str, qualname: str) -> Any:
        """One of Triton's builtins, as the original function the tape keys with."""
        found = _builtin(self.runtime, module, qualname)
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{qualname} is not a Triton builtin here")
        return found


#: the restorers a file may call, by the qualified names pickle writes them under
_RESTORERS = {
    f"_Unpickler.{name}": getattr(_Unpickler, name)
    for name in ("engine_dtype", "block_type", "type_class", "enum_member", "triton_scalar", "triton_object",
                 "builtin")  # fmt: skip
}


@functools.cache
def _salt() -> bytes:
    return codecache._salt(_DEPENDS) + b"\0" + triton.__version__.encode()


@functools.cache
def key(filename: str, qualname: str, options_key: str) -> str:
    """The name of the file that keeps the plans of kernel ``qualname`` in ``filename``."""
    digest = hashlib.sha256(_salt())
    digest.update(f"\0{filename}\0{qualname}\0{options_key}".encode())
    return _PREFIX + digest.hexdigest()


def _dumps(value: Any, runtime: Any, shared: bool = True) -> bytes:
    """``value`` pickled (``shared``: an object met twice is written once and read back as one)."""
    out = io.BytesIO()
    pickler = _Pickler(out, runtime)
    pickler.fast = not shared
    pickler.dump(value)
    return out.getvalue()


def _storable(plans: dict[tuple, Plan], runtime: Any) -> list[tuple]:
    """The entries of ``plans`` a file can hold: those that read back as themselves (the same pickle,
    which objects are shared aside), not those holding what a file cannot represent."""
    entries = []
    for k, plan in plans.items():
        entry = (k, plan.calls, plan.out)
        try:
            back = _Unpickler(_dumps(entry, runtime), runtime).load()
            alike = _dumps(back, runtime, shared=False) == _dumps(entry, runtime, shared=False)
        except Exception:  # noqa: BLE001 - _NotCached, or anything a restorer or pickle refuses
            alike = False
        if alike:
            entries.append(entry)
    return entries


def _digest(name: str, body: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\0" + body).digest()


def _seal(name: str, body: bytes) -> bytes:
    """A file's bytes: a digest of its name and body, then the body (a torn, altered or renamed file
    does not match)."""
    return _digest(name, body) + body


def _unseal(name: str, data: bytes) -> bytes | None:
    """The body of a file's bytes (None: its digest does not match)."""
    body = data[_DIGEST:]
    return body if data[:_DIGEST] == _digest(name, body) else None


def load(name: str, runtime: Any) -> dict[tuple, Plan]:
    """The plans stored under ``name`` (empty: no cache, no entry, or a file that does not load)."""
    data = codecache.read(name)
    body = None if data is None else _unseal(name, data)
    if body is None:
        return {}
    try:
        return {k: Plan(calls, out) for k, calls, out in _Unpickler(body, runtime).load()}
    except Exception:  # noqa: BLE001 - any malformed file (pickle, shapes, specs) is simply not used
        return {}


def store(name: str, entries: list[tuple], runtime: Any) -> None:
    """Keep ``entries`` (from :func:`_storable`) under ``name``, as one pickle (what they share is
    written once)."""
    codecache.write(name, _seal(name, _dumps(entries, runtime)))


class KernelPlans:
    """The plans of one kernel's first launch in this process: loaded into the tape when it starts,
    noted while it runs, added to its file when it ends if it recorded plans the file did not have."""

    #: (cache directory, kernel file, qualified name, builder options) of the kernels whose plans this
    #: process has loaded: a kernel's later launches neither load nor store
    _done: set[tuple] = set()

    def __init__(self, name: str, tape: Tape, options_key: str, runtime: Any):
        self.name, self.tape, self.runtime = name, tape, runtime
        self.loaded = load(name, runtime)
        tape.add(options_key, self.loaded)
        tape.collected = {}

    @classmethod
    def begin(cls, fn: Any, options_key: str, tape: Tape, runtime: Any) -> KernelPlans | None:
        """Start a launch of the Python function ``fn`` (None: not its first in this process, or no cache)."""
        folder = codecache.directory()
        kernel = (folder, fn.__code__.co_filename, fn.__qualname__, options_key)
        if folder is None or kernel in cls._done:
            return None
        cls._done.add(kernel)
        return cls(key(*kernel[1:]), tape, options_key, runtime)

    def end(self) -> None:
        """End the launch: add the plans it used that the file lacks (past :data:`MAX_PLANS`, the
        file keeps only this launch's)."""
        used = dict(self.tape.collected.values())
        self.tape.collected = None
        added = _storable({k: plan for k, plan in used.items() if k not in self.loaded}, self.runtime)
        if not added:
            return  # nothing new, or nothing new a file can hold
        if len(self.loaded) + len(used) > MAX_PLANS:
            store(self.name, _storable(used, self.runtime), self.runtime)
        else:
            kept = [(k, plan.calls, plan.out) for k, plan in self.loaded.items()]  # read back already
            store(self.name, kept + added, self.runtime)

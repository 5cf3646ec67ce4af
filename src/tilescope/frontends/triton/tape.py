"""Triton's language layer, replayed: the builder calls of a builtin, recorded once per argument types.

Triton's semantic layer (type checks, broadcasting, implicit casts) turns one ``tl`` call into a few
builder calls, and which calls it makes depends only on the arguments' Triton types and Python
values, never on their data (the compiler cannot see data). A kernel's loop makes the same calls
with the same types every iteration, so for each (builtin, argument types and constants) the
builder calls are recorded once — each call's arguments as references to the builtin's argument
values, to earlier calls' results, or as constants — with the Triton types of the result; later
calls replay them on the current builder. The engine then runs the same ops on the same values,
with the same records, faults and sites, without re-running the semantic layer's Python.

A call that cannot be keyed (a function or an unknown object among its arguments), or whose
recording meets something it cannot replay (a value that did not come from its arguments or its
own builder calls, a result that is not tensors and constants), simply runs as it is, every time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import triton.language as tl

from ...engine.values import DescriptorValue, Value

_HANDLES = (Value, DescriptorValue)
#: plans kept per builder configuration before they are dropped (keys include Python constants)
MAX_PLANS = 65536
_SCALARS = (int, bool, str, type(None))


def _type_key(ty: Any) -> tuple:
    return (ty.__class__, ty.name)


def _const_key(value: Any) -> Any:
    """A hashable key of a Python or constexpr value (None: not one we key)."""
    kind = type(value)
    if kind in _SCALARS:
        return (kind, value)
    if kind is float:
        return (kind, value.hex())  # -0.0 and NaN keyed by their bits
    if isinstance(value, tl.dtype):
        return _type_key(value)
    if kind is tl.constexpr:
        inner = _const_key(value.value)
        return None if inner is None else ("constexpr", inner)
    if kind is tuple:
        parts = tuple(_const_key(v) for v in value)
        return None if any(p is None for p in parts) else ("tuple", parts)
    if kind is slice:  # t[None, :]
        parts = tuple(_const_key(v) for v in (value.start, value.stop, value.step))
        return None if any(p is None for p in parts) else ("slice", parts)
    if value is Ellipsis:
        return ("ellipsis",)
    return None


def _arg_key(value: Any, tensors: list) -> Any:
    if type(value) is tl.tensor:
        if not isinstance(value.handle, Value):
            return None
        # which arguments share a value is part of the key: x + x and x + y replay differently
        alias = None
        for i, t in enumerate(tensors):
            if t.handle is value.handle:
                alias = i
                break
        tensors.append(value)
        return ("tensor", alias, *_type_key(value.type))
    if type(value) is tuple:
        parts = tuple(_arg_key(v, tensors) for v in value)
        return None if any(p is None for p in parts) else ("tuple", parts)
    return _const_key(value)


def key(member: Any, args: tuple, kwargs: dict) -> tuple[tuple | None, list]:
    """The replay key of a builtin call and its tensor arguments in key order (key None: not keyed)."""
    tensors: list = []
    parts: list = [member]
    for value in args:
        k = _arg_key(value, tensors)
        if k is None:
            return None, tensors
        parts.append(k)
    for name in sorted(kwargs):
        k = _arg_key(kwargs[name], tensors)
        if k is None:
            return None, tensors
        parts.append((name, k))
    return tuple(parts), tensors


class Recorder:
    """Stands in for the builder while a builtin runs the first time, and notes every call."""

    def __init__(self, builder: Any, tensors: list):
        self.builder = builder
        self.tensors = tensors
        self.refs: dict[int, tuple] = {}
        for i, t in enumerate(tensors):
            self.refs.setdefault(id(t.handle), ("arg", i))
        self.keep: list = []  # what the refs point at stays alive (ids stay unique)
        self.calls: list[tuple] = []
        self.ok = True

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.builder, name)
        if not callable(attr):
            return attr

        def record(*args: Any, **kwargs: Any) -> Any:
            spec = ([self._spec(a) for a in args], {k: self._spec(v) for k, v in kwargs.items()})
            result = attr(*args, **kwargs)
            self._register(result, ("call", len(self.calls)))
            self.calls.append((name, *spec))
            return result

        return record

    def _register(self, result: Any, ref: tuple) -> None:
        if isinstance(result, _HANDLES):
            self.refs[id(result)] = ref
            self.keep.append(result)
        elif isinstance(result, tuple):
            for i, part in enumerate(result):
                self._register(part, (*ref, i))

    def _spec(self, value: Any) -> tuple:
        ref = self.refs.get(id(value))
        if ref is not None and isinstance(value, _HANDLES):
            return ("ref", ref)
        if isinstance(value, _HANDLES):
            self.ok = False  # a value from elsewhere: cannot be replayed
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, [self._spec(v) for v in value])
        return ("const", value)

    def plan(self, result: Any) -> Plan | None:
        """The replayable form of what was recorded (None when it cannot be replayed)."""
        out = self._out(result)
        return Plan(self.calls, out) if self.ok and out is not None else None

    def _out(self, result: Any) -> tuple | None:
        if type(result) is tl.tensor:
            for i, t in enumerate(self.tensors):
                if t is result:
                    return ("same", i)
            ref = None if result.handle is None else self.refs.get(id(result.handle))
            if result.handle is not None and (ref is None or not isinstance(result.handle, _HANDLES)):
                return None
            fields = {k: v for k, v in vars(result).items() if k != "handle"}
            return ("tensor", ref, fields)
        if isinstance(result, tuple):
            parts = [self._out(r) for r in result]
            return None if any(p is None for p in parts) else ("tuple", parts)
        if _const_key(result) is not None:
            return ("const", result)
        return None


def _getter(spec: tuple) -> Callable[[list, list], Any]:
    """What a recorded argument spec reads, as a function of (tensor arguments, call results)."""
    kind, body = spec
    if kind == "const":
        return lambda tensors, results: body
    if kind == "ref":
        return _ref_getter(body)
    parts = [_getter(s) for s in body]
    if kind == "list":
        return lambda tensors, results: [g(tensors, results) for g in parts]
    return lambda tensors, results: tuple([g(tensors, results) for g in parts])


def _ref_getter(ref: tuple) -> Callable[[list, list], Any]:
    """A reference to a tensor argument's handle or to (a part of) an earlier call's result."""
    if ref[0] == "arg":
        index = ref[1]
        return lambda tensors, results: tensors[index].handle
    call, path = ref[1], ref[2:]
    if not path:
        return lambda tensors, results: results[call]

    def part(tensors: list, results: list) -> Any:
        found = results[call]
        for i in path:
            found = found[i]
        return found

    return part


def _builder(spec: tuple) -> Callable[[list, list], Any]:
    """The builtin's result from a recorded output spec, as a function of (tensors, call results)."""
    kind = spec[0]
    if kind == "same":
        index = spec[1]
        return lambda tensors, results: tensors[index]
    if kind == "tensor":
        fields = spec[2]
        handle = None if spec[1] is None else _ref_getter(spec[1])

        def tensor(tensors: list, results: list) -> Any:
            t = tl.tensor.__new__(tl.tensor)
            t.__dict__.update(fields)
            t.handle = None if handle is None else handle(tensors, results)
            return t

        return tensor
    if kind == "tuple":
        parts = [_builder(s) for s in spec[1]]
        return lambda tensors, results: tuple([b(tensors, results) for b in parts])
    value = spec[1]
    return lambda tensors, results: value


class Plan:
    """A builtin's recorded builder calls and result, replayable on any builder.

    The recorded specs are turned into reader functions once, when the plan is made, so that a
    replay only calls the builder (no spec is interpreted again per call)."""

    __slots__ = ("calls", "out", "_steps", "_result")

    def __init__(self, calls: list[tuple], out: tuple):
        self.calls, self.out = calls, out
        self._steps = [
            (name, [_getter(a) for a in args], {k: _getter(v) for k, v in kwargs.items()})
            for name, args, kwargs in calls
        ]
        self._result = _builder(out)

    def replay(self, builder: Any, tensors: list) -> Any:
        """Run the recorded builder calls on ``builder`` for these tensor arguments; the result."""
        results: list = []
        for name, args, kwargs in self._steps:
            fn = getattr(builder, name)
            values = [g(tensors, results) for g in args]
            if kwargs:
                results.append(fn(*values, **{k: g(tensors, results) for k, g in kwargs.items()}))
            else:
                results.append(fn(*values))
        return self._result(tensors, results)


class Tape:
    """The recorded plans of builtin calls, per builder configuration."""

    def __init__(self):
        self._plans: dict[str, dict] = {}

    def call(self, member: Any, args: tuple, kwargs: dict, semantic: Any) -> Any:
        """``member(*args, **kwargs)`` on ``semantic``: replayed when it was recorded before."""
        builder = semantic.builder
        if isinstance(builder, Recorder) or builder.launch.scheduler is not None:
            return member(*args, **kwargs, _semantic=semantic)  # nested in a recording; or interleaved
        k, tensors = key(member, args, kwargs)
        if k is None:
            return member(*args, **kwargs, _semantic=semantic)
        plans = self._plans.setdefault(builder.options_key, {})
        plan = plans.get(k)
        if plan is not None:
            return plan.replay(builder, tensors)
        recorder = Recorder(builder, tensors)
        semantic.builder = recorder
        try:
            result = member(*args, **kwargs, _semantic=semantic)
        finally:
            semantic.builder = builder
        plan = recorder.plan(result)
        if plan is not None:
            if len(plans) >= MAX_PLANS:
                plans.clear()
            plans[k] = plan
        return result

    @staticmethod
    def decided(semantic: Any) -> None:
        """The language layer asked the batch for a tensor's value (``__index__``): what it does next
        depends on data, so the call being recorded, if any, is not replayed."""
        builder = getattr(semantic, "builder", None)
        if isinstance(builder, Recorder):
            builder.ok = False

"""A toy tile DSL on the engine, no Triton anywhere: what a frontend is, in under a hundred lines.

A kernel is a Python function of a context ``k`` and its arguments; ``k`` offers NumPy-style
calls (``k.program_id``, ``k.arange``, ``k.load``, ``k.store``, ``k.atomic_add``, ``k.sum``,
``k.where``) and tiles support ``+ - * < <= &`` and indexing by ``None`` for a new axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tilescope.engine import access, atomics, dtypes, ops, reduce
from tilescope.engine.launch import KernelRef, run_launch
from tilescope.engine.ops import Op
from tilescope.engine.sites import SiteFinder
from tilescope.engine.values import Value
from tilescope.ir import Node

SITES = SiteFinder()


class Tile:
    """A value of the running batch; operators are engine ops."""

    def __init__(self, k: K, value: Any):
        self.k, self.v = k, value

    def _op(self, op: Op, other: Any, swap: bool = False) -> Tile:
        o = other.v if isinstance(other, Tile) else ops.constant(other, self.v.dtype)
        a, b = (o, self.v) if swap else (self.v, o)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = (
            ops.apply(self.k.launch, Op.BROADCAST, t, shape=shape) if t.shape != shape else t for t in (a, b)
        )
        if a.dtype.is_pointer:
            return Tile(self.k, ops.apply(self.k.launch, Op.PTR_ADD, a, b))
        return Tile(self.k, ops.apply(self.k.launch, op, a, b))

    __add__ = lambda s, o: s._op(Op.ADD, o)  # noqa: E731
    __radd__ = lambda s, o: s._op(Op.ADD, o, True)  # noqa: E731
    __sub__ = lambda s, o: s._op(Op.SUB, o)  # noqa: E731
    __mul__ = lambda s, o: s._op(Op.MUL, o)  # noqa: E731
    __rmul__ = lambda s, o: s._op(Op.MUL, o, True)  # noqa: E731
    __lt__ = lambda s, o: s._op(Op.LT, o)  # noqa: E731
    __le__ = lambda s, o: s._op(Op.LE, o)  # noqa: E731
    __and__ = lambda s, o: s._op(Op.AND, o)  # noqa: E731

    def __getitem__(self, index: tuple) -> Tile:
        axis = list(index).index(None)
        return Tile(self.k, ops.apply(self.k.launch, Op.EXPAND_DIMS, self.v, axis=axis))


class K:
    """The context a toy kernel gets: the DSL's functions, bound to the running launch."""

    def __init__(self, launch: Any):
        self.launch = launch

    def program_id(self, axis: int = 0) -> Tile:
        return Tile(self, ops.program_id(self.launch, axis))

    def arange(self, n: int) -> Tile:
        return Tile(self, ops.arange(self.launch, 0, n))

    def load(self, ptr: Tile, mask: Tile | None = None, other: float = 0.0) -> Tile:
        fill = ops.constant(other, ptr.v.dtype.pointee)
        return Tile(self, access.load(self.launch, ptr.v, mask and mask.v, fill))

    def store(self, ptr: Tile, value: Tile, mask: Tile | None = None) -> None:
        access.store(self.launch, ptr.v, value.v, mask and mask.v)

    def atomic_add(self, ptr: Tile, value: Tile | int, mask: Tile | None = None) -> Tile:
        v = value.v if isinstance(value, Tile) else ops.constant(value, ptr.v.dtype.pointee)
        v = ops.apply(self.launch, Op.BROADCAST, v, shape=ptr.v.shape) if v.shape != ptr.v.shape else v
        return Tile(self, atomics.atomic(self.launch, "add", ptr.v, [v], mask and mask.v, sem="relaxed"))

    def sum(self, x: Tile, axis: int | None = None) -> Tile:
        return Tile(self, reduce.reduce(self.launch, [x.v], axis, "sum")[0])

    def where(self, cond: Tile, a: Tile, b: float) -> Tile:
        return Tile(self, ops.apply(self.launch, Op.SELECT, cond.v, a.v, ops.constant(b, a.v.dtype)))


class ToyKernel:
    """``@toy.kernel``: a function ``fn(k, *args)`` launched as ``kernel[grid](*args)``."""

    def __init__(self, fn):
        self.fn = fn
        SITES.add({fn.__code__}, user=True)


class ToyLauncher:
    def __init__(self, kernel: ToyKernel, *, clients, options, session):
        self.kernel, self.clients, self.options, self.session = kernel, clients, options, session
        self.progress, self.name = None, kernel.fn.__name__

    @property
    def reports(self) -> list:
        return [c.report() for c in self.clients]

    def __getitem__(self, grid):
        return lambda *args: self.run(*args, grid=grid)

    def run(self, *args, grid):
        code = self.kernel.fn.__code__

        def bind(host):
            bound = []
            for i, a in enumerate(args):
                if isinstance(a, np.ndarray):
                    view, elem = host.tensor(f"arg{i}", a, i)
                    addr = np.array([view.info.address], np.uint64)
                    bound.append(Value(addr, dtypes.pointer(elem), Node(f"argument arg{i}", None), view.vid))
                else:
                    bound.append(ops.constant(a, dtypes.INT32))
            return bound

        def run_batch(launch, bound):
            k = K(launch)
            self.kernel.fn(k, *(Tile(k, v) for v in bound))

        run_launch(session=self.session, kernel=KernelRef(self.name, code.co_filename, code.co_firstlineno),
                   grid=grid, clients=self.clients, options=self.options, sites=SITES, bind=bind,
                   run_batch=run_batch, run_program=run_batch, frontend="toy")  # fmt: skip


class ToyFrontend:
    name, options = "toy", ()

    def accepts(self, kernel):
        return "kernel" if isinstance(kernel, ToyKernel) else None

    def launcher(self, kernel, **options):
        return ToyLauncher(kernel, **options)

    def install_route(self):
        pass


FRONTEND = ToyFrontend()
kernel = ToyKernel

"""Running ``@triton.jit`` code on the engine: language patches, nested calls, control flow.

For the duration of a launch, Triton's builtins are bound to a semantic whose builder is ours, a
tensor's truth value and integer value become control-flow decisions of the batch, ranges and
``tl.reduce``/``tl.associative_scan`` become ours, and calling a ``@triton.jit`` function from
kernel code runs its rewritten Python function. Everything is restored when the launch ends, so the
user's process keeps working with Triton as before.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import triton.language as tl
from triton.language import core as tl_core

from ...engine.errors import KernelError
from ...engine.launch import Launch
from ...engine.sites import SiteFinder
from .. import gluon
from . import rewrite, typemap, version
from .combine import ReduceScan
from .control import ControlFlow, StaticRange
from .tape import Tape

_MISSING = object()
# what Python does for a dunder the class lacks, outside a launch (compiling for a GPU, Triton's own code)
_ABSENT_DUNDERS = {"__bool__": lambda self: True}
#: code under these folders may call Triton builtins without being kernel code
_LIBRARY_DIRS = (
    os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__))) + os.sep,  # .../site-packages/triton/
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,  # .../tilescope/
)


class TritonRuntime(ControlFlow):
    """The ``__tilescope__`` object rewritten kernels call, and the launch's language patches.

    The running launch and its semantic are per thread: concurrent mode runs each in-flight program
    in its own thread, and a thread that is not running a kernel sees Triton as it is.
    """

    @property
    def launch(self) -> Launch | None:
        """The launch (or program of a concurrent launch) this thread is executing, if any."""
        return getattr(self._local, "launch", None)

    @property
    def semantic(self) -> Any:
        """The Triton semantic bound to this thread's launch."""
        return getattr(self._local, "semantic", None)

    def __init__(self):
        self.sites = SiteFinder()
        self._local = threading.local()
        self._rewritten: dict[types.FunctionType, types.FunctionType] = {}
        self._callers: dict[int, bool] = {}
        self._eager: dict[types.FunctionType, set] = {}
        self._installed = False
        self._gluon_installed = False
        self._libdevice_installed = False
        self._guards: set[int] = set()  # ids of the guards _patch made (a name already guarded stays so)
        self._routed: set[type] = set()  # the jit kinds whose calls are routed (_route_jit_calls)
        #: id of each of Triton's builtins as it was before the patches -> its patched guard, for names a
        #: library bound before tilescope patched (``gather = tl.gather`` at import)
        self.patched_builtins: dict[int, Any] = {}
        #: id of each of ``tl.extra.libdevice``'s backend-neutral stubs, as Triton made it (read before
        #: the patches) -> its name, for names bound to one by import (``from ... import rsqrt``)
        self.libdevice_stub_names: dict[int, str] = {}
        self._copy: dict[Any, set] = {}
        self._serial: dict[Any, set] = {}
        self.reducer = ReduceScan(self)
        self.tape = Tape()

    # ------------------------------------------------------------------ functions

    def function(self, jit_fn: Any) -> types.FunctionType:
        """The rewritten Python function of a ``@triton.jit`` function (cached)."""
        fn = version.python_function(jit_fn)
        new = self._rewritten.get(fn)
        if new is None:
            new = rewrite.rewrite(fn, self, version.source_lines(jit_fn))
            self._rewritten[fn] = new
            self.sites.add(rewrite.code_objects(new.__code__), user=not _is_triton_code(fn))
        return new

    def eager_sites(self, jit_fn: Any) -> set:
        """The sites whose values demand-driven runs of ``jit_fn`` must compute (learned, then kept)."""
        return self._eager.setdefault(version.python_function(jit_fn), set())

    def copy_sites(self, jit_fn: Any) -> set:
        """The load sites of ``jit_fn`` whose data is copied, not shared (learned, then kept)."""
        return self._copy.setdefault(version.python_function(jit_fn), set())

    def serial_loops(self, jit_fn: Any) -> set:
        """The independent loops of ``jit_fn`` that run iteration by iteration (learned, then kept)."""
        return self._serial.setdefault(version.python_function(jit_fn), set())

    def call_jit(self, jit_fn: Any, args, kwargs) -> Any:
        """Call a ``@triton.jit`` function from kernel code (dtypes arrive as constexprs, as compiled)."""
        args = [tl.constexpr(a) if isinstance(a, tl.dtype) else a for a in args]
        kwargs = {k: tl.constexpr(v) if isinstance(v, tl.dtype) else v for k, v in kwargs.items()}
        return self.function(jit_fn)(*args, **kwargs)

    # ------------------------------------------------------------------ hooks used by rewritten code

    def assign(self, value: Any) -> Any:
        """Assignment converts Python scalars to Triton tensors, as the compiler does."""
        return self.semantic.to_tensor(value, False)

    def compare_chain(self, thunks: list, ops: list) -> Any:
        """``a < b < c``: elementwise and of each comparison, short-circuiting on Python False."""
        left = thunks[0]()
        result = None
        for op, thunk in zip(ops, thunks[1:], strict=False):
            right = thunk()
            r = op(left, right)
            if isinstance(r, tl.tensor):
                result = r if result is None else self.semantic.logical_and(result, r)
            elif not r:
                return False
            left = right
        return True if result is None else result

    def bool_op(self, kind: str, thunks: list) -> Any:
        """``and``/``or`` as the compiler does them: constexprs short-circuit, tensors combine elementwise."""
        tensors = []
        value = None
        for thunk in thunks:
            value = thunk()
            if isinstance(value, tl.tensor):
                tensors.append(value)
                continue
            truth = bool(version.unwrap(value))
            if (kind == "logical_and" and not truth) or (kind == "logical_or" and truth):
                return value
        if not tensors:
            return value
        result = tensors[-1]
        for lhs in reversed(tensors[:-1]):
            result = getattr(lhs, kind)(result)
        return result

    def not_(self, value: Any) -> Any:
        """``not x``: logical not of a tensor, Python's ``not`` otherwise."""
        if isinstance(value, tl.tensor):
            return value.__not__()
        return not version.unwrap(value)

    def device_assert(self, cond: Any, msg: Any = "") -> None:
        """``assert cond, msg`` in kernel code is ``tl.device_assert``."""
        if isinstance(cond, tl.tensor):
            tl.device_assert(cond, msg)
        elif not cond:
            raise AssertionError(msg)

    # ------------------------------------------------------------------ tensor protocol

    def tensor_bool(self, tensor: tl.tensor) -> bool:
        """``if t:`` in kernel code decides for the batch; elsewhere it is a None test."""
        # frame 1 is the patch's guard; frame 2 is whoever asked for the truth value
        if not self.sites.is_kernel(sys._getframe(2).f_code):
            return True
        return bool(self.launch.decide(tensor.handle.data, self.sites.find()))

    def tensor_index(self, tensor: tl.tensor) -> int:
        """``range(t)`` and indexing: the integer the batch agrees on."""
        self.tape.decided(self.semantic)
        return int(self.launch.decide(tensor.handle.data, self.sites.find()))

    # ------------------------------------------------------------------ patching

    def _patch(self, owner: Any, name: str, ours: Any, builtin: bool = False) -> None:
        """Replace ``owner.name`` by a guard: ours while a launch runs, the original otherwise.

        ``builtin``: a Triton builtin, which the compiler lets only ``@triton.jit`` code (and
        Triton's own library) call: called from a plain Python function, it fails as it would there.
        """
        original = getattr(owner, name, _MISSING)
        if original is _MISSING and name in _ABSENT_DUNDERS:
            original = _ABSENT_DUNDERS[name]
        runtime = self
        if isinstance(ours, property):

            def get(obj):
                if runtime.launch is not None:
                    return ours.fget(obj)
                return original.__get__(obj, type(obj)) if original is not _MISSING else None

            setattr(owner, name, property(get))
            return

        sites = self.sites

        def guard(*args, **kwargs):
            if runtime.launch is not None:
                frame = sys._getframe(1)
                if builtin and "_semantic" not in kwargs and not runtime.may_call_builtins(frame.f_code):
                    runtime.not_jit(frame, name)
                sites.note(frame)
                return ours(*args, **kwargs)
            return original(*args, **kwargs)

        if original is not _MISSING and callable(original):
            # keep Triton's builtin marker and signature, so other patchers (its interpreter) see a builtin
            functools.update_wrapper(guard, original)
        self._guards.add(id(guard))
        setattr(owner, name, guard)

    def _install_once(self) -> None:
        """Install the guarded patches on Triton's language layer (once per process)."""
        if self._installed:
            return
        runtime = self
        self._patch_builtins(version.builtin_targets(version.triton_builtin_owners()))
        tensor = tl.tensor
        self._patch(tensor, "__bool__", self.tensor_bool)
        self._patch(tensor, "__index__", self.tensor_index)
        self._patch(tensor, "__repr__", lambda t: f"tensor({t.type}, {t.handle!r})")
        self._patch(
            tensor,
            "T",
            property(
                lambda t: runtime.semantic.permute(
                    t, list(range(len(t.shape) - 2)) + [len(t.shape) - 1, len(t.shape) - 2]
                )
            ),
        )
        self._patch(tl.dtype, "to_ir", lambda self_, builder: typemap.to_engine(self_))
        self._patch_language([tl, tl_core])
        self._installed = True

    def _install_gluon_once(self) -> None:
        """Install Gluon's patches, once the user's code has imported Gluon (a Gluon kernel or
        descriptor exists only then; importing it for every process would cost each first launch of
        any kernel ~0.2 s)."""
        if self._gluon_installed or not gluon.imported():
            return
        guarded = set(self._guards)  # Gluon's modules, imported after the patches, bound these names

        def patch(owner: Any, name: str, ours: Any, builtin: bool = False) -> None:
            if id(getattr(owner, name, None)) not in guarded:
                self._patch(owner, name, ours, builtin)

        self._patch_builtins(version.builtin_targets(gluon.builtin_owners()), guarded)
        for owner, name, ours in gluon.type_patches():
            self._patch(owner, name, ours)
        self._patch_language(gluon.language_modules(), patch)
        self._gluon_installed = True

    def _install_libdevice_once(self) -> None:
        """Point ``tl.extra.libdevice``'s stubs at CUDA's functions, once the user's code has imported
        that module (see :func:`version.libdevice_stubs`)."""
        if self._libdevice_installed:
            return
        stubs = version.libdevice_stubs()
        for owner, name, stub, real in stubs:
            self.libdevice_stub_names[id(stub)] = name
            if real is not None:
                self._patch(owner, name, real)
        self._libdevice_installed = bool(stubs)

    def _patch_builtins(self, targets: list[tuple[Any, str, Any]], guarded: set[int] | None = None) -> None:
        """Bind each ``(owner, name, builtin)`` to the launch's semantic (through the tape, guarded by
        :meth:`_patch`), except the names whose value is one of the guards in ``guarded`` (ids; a name
        already guarded stays so). A builtin under several owners by one name (``tl.load``,
        ``tl.core.load``) gets one guard."""
        runtime = self

        def bind(member):
            def call(*args, **kwargs):
                kwargs.pop("_semantic", None)
                return runtime.tape.call(member, args, kwargs, runtime.semantic)

            return call

        made: dict[tuple[int, str], Any] = {}
        for owner, name, member in targets:
            if guarded is None or id(getattr(owner, name, None)) not in guarded:
                guard = made.get((id(member), name))
                if guard is None:
                    self._patch(owner, name, bind(member), builtin=True)
                    made[id(member), name] = getattr(owner, name)
                else:
                    setattr(owner, name, guard)
            self.patched_builtins.setdefault(id(member), getattr(owner, name))

    def _patch_language(self, modules: list, patch: Callable | None = None) -> None:
        """The language namespaces' compile-time helpers, hints, and reductions and scans (over their
        builtins: ``reduce`` is one), with ``patch`` (:meth:`_patch` by default)."""
        patch = patch or self._patch
        for lang in modules:
            patch(lang, "static_range", _static_range)
            patch(lang, "static_assert", _static_assert)
            patch(lang, "static_print", print)
            for hint in ("multiple_of", "max_contiguous", "max_constancy"):
                patch(lang, hint, lambda x, *a, **k: x)
            patch(lang, "reduce", self.reducer.reduce)
            patch(lang, "associative_scan", self.reducer.scan)

    def _route_jit_calls(self) -> None:
        """Route calls of ``@triton.jit`` functions to :meth:`call_jit`, for every kind that exists by now
        (the interpreter's kind appears once Triton imports its interpreter, maybe after a first launch)."""
        runtime = self
        for kind in version.jit_callables():
            if kind not in self._routed:
                self._patch(kind, "__call__", lambda fn, *a, **k: runtime.call_jit(fn, a, k))
                self._routed.add(kind)

    def may_call_builtins(self, code: types.CodeType) -> bool:
        """Whether code may call Triton builtins: kernel code, Triton's own library, tilescope's."""
        known = self._callers.get(id(code))
        if known is None:
            known = self.sites.is_kernel(code) or code.co_filename.startswith(_LIBRARY_DIRS)
            self._callers[id(code)] = known
        return known

    def not_jit(self, frame: Any, builtin: str) -> None:
        """Refuse a builtin called from a plain Python function, as Triton's compiler does."""
        code = frame.f_code
        raise KernelError(
            f"`{code.co_name}` ({code.co_filename}:{code.co_firstlineno}) is not a @triton.jit function, "
            f"yet it calls the Triton builtin `{builtin}`; Triton's compiler rejects this (\"Did you forget "
            'to add @triton.jit ?"). Decorate it with @triton.jit.',
            kernel=self.launch.kernel_name,
            site=self.sites.frame_site(frame),
        )

    def install(self, launch: Launch, semantic: Any) -> None:
        """Make Triton's language layer run ``launch`` (patches are installed on first use)."""
        self._install_once()
        self._install_libdevice_once()
        self._install_gluon_once()
        self._route_jit_calls()
        self._local.semantic = semantic
        self._local.launch = launch

    def uninstall(self) -> None:
        """End the launch: every patched name behaves as Triton's own again."""
        self.sites.forget()
        self._local.launch = None
        self._local.semantic = None


#: top-level packages whose ``@triton.jit`` functions are a library, not the user's code (their ops report
#: the user's calling line): Triton's own, and those of DSLs that compile to Triton (``add_library_package``)
LIBRARY_PACKAGES: set[str] = {"triton"}


def add_library_package(name: str) -> None:
    """Treat the ``@triton.jit`` functions of package ``name`` as library code (Helion's helpers)."""
    LIBRARY_PACKAGES.add(name)


def _is_triton_code(fn: types.FunctionType) -> bool:
    """True for functions of a Triton library (their ops report the user's calling line)."""
    return (getattr(fn, "__module__", "") or "").split(".")[0] in LIBRARY_PACKAGES


def _static_range(arg1, arg2=None, step=None) -> StaticRange:
    """``tl.static_range`` during a launch: a Python range the loop hands out as ints."""
    unwrap = version.unwrap
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    return StaticRange(int(unwrap(start)), int(unwrap(end)), int(unwrap(step)) if step is not None else 1)


def _static_assert(cond, msg=""):
    if not version.unwrap(cond):
        raise AssertionError(f"static_assert failed: {version.unwrap(msg)}")


RUNTIME = TritonRuntime()

"""Triton's argument conventions on the engine: tensors, scalars, descriptors, tuples, constexprs.

Tensors are registered through the engine's host memory (:mod:`tilescope.engine.host`), and so
are other objects with ``data_ptr()`` and ``dtype`` (libraries' buffer classes, Triton's
``reinterpret``), which GPU Triton takes as pointers too, typed by their dtype's name; Python
scalars take Triton's argument types (int32 when the value fits, else int64 or uint64; float32;
bool as int1); host ``TensorDescriptor``s become engine descriptors; tuples are converted element
by element; constexprs pass through as Python values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import triton.language as tl

from ...engine import dtypes
from ...engine.errors import LaunchError
from ...engine.host import HostMemory, is_tensor
from ...engine.values import DescriptorValue, Value
from ...ir import ArgumentInfo, Node
from .. import gluon
from . import typemap, version


def scalar(value: Any, ty: Any, name: str) -> tl.tensor:
    """A Python scalar argument as a uniform engine value of Triton type ``ty``."""
    engine_ty = typemap.to_engine(ty)
    data = np.array([value]).astype(engine_ty.storage)
    return tl.tensor(Value(data, engine_ty, Node(f"argument {name}", None)), ty)


def bind(call_args: dict, constexprs: set, host: HostMemory) -> dict[str, Any]:
    """The kernel's arguments as engine values, keyed by parameter name; tensors registered in ``host``."""
    kernel_args: dict[str, Any] = {}
    for index, (name, value) in enumerate(call_args.items()):
        if name in constexprs:
            kernel_args[name] = value.value if isinstance(value, tl.constexpr) else value
            host.arguments.append(ArgumentInfo(index, name, "constexpr", value=kernel_args[name]))
            continue
        try:
            kernel_args[name] = _convert(name, value, host, index)
        except LaunchError as exc:
            raise LaunchError(f"argument `{name}`: {exc}") from None
    return kernel_args


def _convert(name: str, value: Any, host: HostMemory, index: int) -> Any:
    arguments = host.arguments
    if value is None or isinstance(value, (str, tl.dtype, tl.constexpr)):
        arguments.append(ArgumentInfo(index, name, "constexpr", value=value))
        return value.value if isinstance(value, tl.constexpr) else value
    if isinstance(value, (bool, np.bool_)):
        arguments.append(ArgumentInfo(index, name, "scalar", "int1", value=bool(value)))
        return scalar(bool(value), tl.int1, name)
    if isinstance(value, (int, np.integer)):
        v = int(value)
        ty = tl.int32 if -(2**31) <= v < 2**31 else tl.int64 if -(2**63) <= v < 2**63 else tl.uint64
        if not -(2**63) <= v < 2**64:
            raise LaunchError(f"integer {v} does not fit in 64 bits")
        arguments.append(ArgumentInfo(index, name, "scalar", ty.name, value=v))
        return scalar(v, ty, name)
    if isinstance(value, (float, np.floating)):
        arguments.append(ArgumentInfo(index, name, "scalar", "fp32", value=float(value)))
        return scalar(float(value), tl.float32, name)
    if isinstance(value, (*version.descriptor_classes(), *gluon.descriptor_classes())):
        return _descriptor(name, value, host, index)
    if isinstance(value, tuple):
        return tuple(_convert(f"{name}[{i}]", v, host, index) for i, v in enumerate(value))
    if is_tensor(value):
        view, elem = host.tensor(name, value, index)
        return _pointer(name, view, elem)
    if hasattr(value, "data_ptr"):  # a library's own buffer object: Triton takes data_ptr() and dtype
        if not hasattr(value, "dtype"):
            raise LaunchError(f"a {type(value).__name__} has data_ptr() but no dtype (Triton needs both)")
        ty = version.pointer_type_of(value.dtype)
        if ty is None:
            raise LaunchError(f"a {type(value).__name__} of dtype {value.dtype}, a type Triton does not know")
        elem = typemap.to_engine(ty.element_ty)
        return _pointer(name, host.buffer(name, value, elem, index), elem)
    raise LaunchError(
        f"unsupported argument type {type(value).__name__}; pass a torch tensor, a NumPy "
        "array, an object with data_ptr() and dtype, a TensorDescriptor, a Python scalar, or None"
    )


def _pointer(name: str, view: Any, elem: Any) -> tl.tensor:
    """A pointer argument to the first element of a registered view."""
    node = Node(f"argument {name}", None)
    value = Value(np.array([view.info.address], dtype=np.uint64), dtypes.pointer(elem), node, view.vid)
    return tl.tensor(value, tl.pointer_type(typemap.to_triton(elem)))


def _descriptor(name: str, desc: Any, host: HostMemory, index: int) -> Any:
    view, elem = host.tensor(name, desc.base, index, kind="descriptor")
    # the descriptor's own shape and strides, not the base tensor's view
    arg = host.arguments.pop()
    host.arguments.append(
        ArgumentInfo(
            index, name, "descriptor", elem.name, tuple(desc.shape), tuple(desc.strides), arg.address
        )
    )
    node = Node(f"argument {name}", None)
    base = Value(np.array([view.info.address], dtype=np.uint64), dtypes.pointer(elem), node, view.vid)
    shape = [Value(np.array([int(s)], dtype=np.int32), dtypes.INT32) for s in desc.shape]
    strides = [Value(np.array([int(s)], dtype=np.int64), dtypes.INT64) for s in desc.strides]
    block = [int(b) for b in desc.block_shape]
    pad = getattr(desc, "padding", "zero") or "zero"
    handle = DescriptorValue(base, shape, strides, block, pad, node)
    handle.round_f32_to_tf32 = bool(getattr(desc, "round_f32_to_tf32", False))
    block_ty = tl.block_type(typemap.to_triton(elem), block)
    shape_t = [tl.tensor(s, tl.int32) for s in shape]
    strides_t = [tl.tensor(s, tl.int64) for s in strides]
    if isinstance(desc, gluon.descriptor_classes()):
        return gluon.descriptor_argument(desc, handle, shape_t, strides_t, block_ty)
    return tl.tensor_descriptor(handle, shape_t, strides_t, block_ty)

"""Kernel arguments as the engine sees them: tensors registered as views of memory, scalars as values.

Every torch tensor or NumPy array argument becomes an allocation in the launch's address table,
keyed by its real address and sharing its memory; a pointer argument is that address plus the view
it came from. Python scalars take Triton's argument types; host ``TensorDescriptor``s become engine
descriptors. Pointers loaded from memory may only land in live tensors, found by :class:`LiveTensors`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import triton.language as tl

from ...engine import numerics as nx
from ...engine.errors import LaunchError
from ...engine.memory import AddressTable
from ...engine.values import DescriptorValue, Value
from ...ir import ArgumentInfo, Node, ViewInfo
from . import version

_TORCH_TYPES = {
    "torch.float32": tl.float32,
    "torch.float16": tl.float16,
    "torch.bfloat16": tl.bfloat16,
    "torch.float64": tl.float64,
    "torch.int8": tl.int8,
    "torch.uint8": tl.uint8,
    "torch.int16": tl.int16,
    "torch.uint16": tl.uint16,
    "torch.int32": tl.int32,
    "torch.uint32": tl.uint32,
    "torch.int64": tl.int64,
    "torch.uint64": tl.uint64,
    "torch.bool": tl.int1,
    "torch.float8_e4m3fn": tl.float8e4nv,
    "torch.float8_e5m2": tl.float8e5,
    "torch.float8_e4m3fnuz": tl.float8e4b8,
    "torch.float8_e5m2fnuz": tl.float8e5b16,
}
_NUMPY_TYPES = {
    "float32": tl.float32,
    "float16": tl.float16,
    "bfloat16": tl.bfloat16,
    "float64": tl.float64,
    "int8": tl.int8,
    "uint8": tl.uint8,
    "int16": tl.int16,
    "uint16": tl.uint16,
    "int32": tl.int32,
    "uint32": tl.uint32,
    "int64": tl.int64,
    "uint64": tl.uint64,
    "bool": tl.int1,
    "float8_e4m3fn": tl.float8e4nv,
    "float8_e5m2": tl.float8e5,
    "float8_e4m3fnuz": tl.float8e4b8,
    "float8_e5m2fnuz": tl.float8e5b16,
}


def is_torch(x: Any) -> bool:
    """True for a torch tensor (without importing torch when the caller never did)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def scalar(value: Any, ty: Any, name: str) -> tl.tensor:
    """A Python scalar argument as a uniform engine value of Triton type ``ty``."""
    data = np.array([value]).astype(nx.storage_dtype(ty))
    return tl.tensor(Value(data, ty, Node(f"argument {name}", None)), ty)


def convert_arguments(call_args: dict, constexprs: set, memory: AddressTable, kernel: str):
    """(ArgumentInfo list, kernel arguments as engine values, copy-back callbacks) for a launch.

    Tensors are registered in the address table; ``kernel`` names the kernel in errors.
    """
    arguments: list[ArgumentInfo] = []
    kernel_args: dict[str, Any] = {}
    copy_backs: list[Callable[[], None]] = []
    for index, (name, value) in enumerate(call_args.items()):
        if name in constexprs:
            kernel_args[name] = value.value if isinstance(value, tl.constexpr) else value
            arguments.append(ArgumentInfo(index, name, "constexpr", value=kernel_args[name]))
            continue
        try:
            converted = _convert_value(name, value, memory, copy_backs, arguments, index)
        except LaunchError as exc:
            raise LaunchError(f"{kernel}, argument `{name}`: {exc}") from None
        kernel_args[name] = converted
    return arguments, kernel_args, copy_backs


def _convert_value(name, value, memory, copy_backs, arguments, index):
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
    if isinstance(value, version.TensorDescriptor):
        return _descriptor(name, value, memory, copy_backs, arguments, index)
    if isinstance(value, tuple):
        return tuple(
            _convert_value(f"{name}[{i}]", v, memory, copy_backs, arguments, index)
            for i, v in enumerate(value)
        )
    if is_torch(value) or isinstance(value, np.ndarray):
        view, elem = register(name, value, memory, copy_backs)
        arguments.append(
            ArgumentInfo(
                index,
                name,
                "tensor",
                elem.name,
                view.info.shape,
                view.info.strides,
                view.info.address,
                view.info.hi - view.info.lo,
            )
        )
        return tl.tensor(
            Value(
                np.array([view.info.address], dtype=np.uint64),
                tl.pointer_type(elem),
                Node(f"argument {name}", None),
                view.vid,
            ),
            tl.pointer_type(elem),
        )
    raise LaunchError(
        f"unsupported argument type {type(value).__name__}; pass a torch tensor, a NumPy "
        "array, a TensorDescriptor, a Python scalar, or None"
    )


def _descriptor(name, desc, memory, copy_backs, arguments, index):
    view, elem = register(name, desc.base, memory, copy_backs)
    arguments.append(
        ArgumentInfo(
            index,
            name,
            "descriptor",
            elem.name,
            tuple(desc.shape),
            tuple(desc.strides),
            view.info.address,
        )
    )
    base = Value(
        np.array([view.info.address], dtype=np.uint64),
        tl.pointer_type(elem),
        Node(f"argument {name}", None),
        view.vid,
    )
    shape = [Value(np.array([int(s)], dtype=np.int32), tl.int32) for s in desc.shape]
    strides = [Value(np.array([int(s)], dtype=np.int64), tl.int64) for s in desc.strides]
    block = [int(b) for b in desc.block_shape]
    pad = getattr(desc, "padding", "zero") or "zero"
    handle = DescriptorValue(base, shape, strides, block, pad, Node(f"argument {name}", None))
    handle.round_f32_to_tf32 = bool(getattr(desc, "round_f32_to_tf32", False))
    block_ty = tl.block_type(elem, block)
    return tl.tensor_descriptor(
        handle,
        [tl.tensor(s, tl.int32) for s in shape],
        [tl.tensor(s, tl.int64) for s in strides],
        block_ty,
    )


def element_type(value: Any) -> Any:
    key = str(value.dtype)
    table = _TORCH_TYPES if is_torch(value) else _NUMPY_TYPES
    ty = table.get(key)
    if ty is None:
        raise LaunchError(f"tensors of dtype {key} are not supported")
    return ty


def register(name: str, value: Any, memory: AddressTable, copy_backs: list):
    """Register a tensor's storage and view; returns (view, element type)."""
    elem = element_type(value)
    size = nx.itemsize(elem)
    if is_torch(value):
        import torch

        tensor = value
        if tensor.device.type == "meta":
            raise LaunchError("meta tensors have no data")
        if tensor.device.type != "cpu":
            host = tensor.detach().to("cpu")
            copy_backs.append(lambda t=tensor, h=host: t.copy_(h))
            tensor = host
        storage = tensor.untyped_storage()
        nbytes = storage.nbytes()
        buf = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (nbytes,), (1,)).numpy()
        st = memory.storage_for(storage.data_ptr(), nbytes, buf)
        address, shape, strides = tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride())
    else:
        array = value
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not root.flags.c_contiguous:
            raise LaunchError("the NumPy array's base buffer is not contiguous; pass np.ascontiguousarray(x)")
        buf = root.reshape(-1).view(np.uint8)
        st = memory.storage_for(root.__array_interface__["data"][0], root.nbytes, buf)
        address = array.__array_interface__["data"][0]
        shape = array.shape
        strides = tuple(s // size for s in array.strides)
        if any(s % size for s in array.strides):
            raise LaunchError("array strides are not multiples of the element size")
    info = ViewInfo(name, address, tuple(shape), tuple(strides), size, elem.name)
    return memory.add_view(info, st), elem


class LiveTensors:
    """Finds live torch tensors / NumPy arrays whose memory holds addresses no argument holds.

    Pointer arrays (grouped GEMM) name tensors that are not kernel arguments. Rather than trust a
    raw address, we look for a live Python tensor object whose storage spans it; only such memory
    is ever read or written. The heap is scanned once per launch, on the first unknown address.
    """

    def __init__(self):
        self._found: list[tuple[int, int, Any]] | None = None

    def _scan(self) -> list[tuple[int, int, Any]]:
        import gc

        torch = sys.modules.get("torch")
        found = []
        for obj in gc.get_objects():
            cls = type(obj)
            try:
                if torch is not None and issubclass(cls, torch.Tensor):
                    if obj.device.type != "cpu":
                        continue
                    st = obj.untyped_storage()
                    found.append((st.data_ptr(), st.nbytes(), obj))
                elif issubclass(cls, np.ndarray):
                    found.append((obj.__array_interface__["data"][0], obj.nbytes, obj))
            except (RuntimeError, TypeError, AttributeError):
                continue
        return found

    def __call__(self, memory: AddressTable, addresses: np.ndarray) -> None:
        if self._found is None:
            self._found = self._scan()
        known = {st.base for st in memory.storages}
        for base, nbytes, obj in self._found:
            if base in known:
                continue
            if np.any((addresses >= np.uint64(base)) & (addresses < np.uint64(base + nbytes))):
                try:
                    ptr = obj.data_ptr() if is_torch(obj) else base
                    register(f"tensor@{ptr:#x}", obj, memory, [])
                    known.add(base)
                except LaunchError:
                    continue


def snapshot(value: Any) -> Any:
    """A copy of a tensor argument (for autotune's ``restore_value``)."""
    return value.clone() if is_torch(value) else np.copy(value) if isinstance(value, np.ndarray) else None


def restore(value: Any, copy: Any) -> None:
    """Put a snapshot back into a tensor argument."""
    if copy is None:
        return
    if is_torch(value):
        value.copy_(copy)
    else:
        value[...] = copy


def zero(value: Any) -> None:
    """Zero a tensor argument (for autotune's ``reset_to_zero``)."""
    if is_torch(value):
        value.zero_()
    elif isinstance(value, np.ndarray):
        value[...] = 0

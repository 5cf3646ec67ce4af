"""Host memory for a launch: torch tensors and NumPy arrays registered as views in the address table.

Every tensor a kernel receives becomes an allocation keyed by its real address and sharing its
memory; a pointer is that address plus the view it came from. A buffer object that only has
``data_ptr()`` is registered as a view of the tensor that owns that memory. CUDA tensors are
copied to the host and back after the launch. Pointers loaded from memory may only land in live
tensors, found by :class:`LiveTensors`. Any frontend uses this; none of it knows a DSL.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ir import ArgumentInfo, ViewInfo
from . import dtypes
from .dtypes import DType
from .errors import LaunchError
from .memory import AddressTable, Storage, View

#: engine dtype of each torch dtype (by name) and NumPy dtype (by name)
_TORCH = {
    "torch.float32": dtypes.FP32,
    "torch.float16": dtypes.FP16,
    "torch.bfloat16": dtypes.BF16,
    "torch.float64": dtypes.FP64,
    "torch.int8": dtypes.INT8,
    "torch.uint8": dtypes.UINT8,
    "torch.int16": dtypes.INT16,
    "torch.uint16": dtypes.UINT16,
    "torch.int32": dtypes.INT32,
    "torch.uint32": dtypes.UINT32,
    "torch.int64": dtypes.INT64,
    "torch.uint64": dtypes.UINT64,
    "torch.bool": dtypes.BOOL,
    "torch.float8_e4m3fn": dtypes.FP8E4M3FN,
    "torch.float8_e5m2": dtypes.FP8E5M2,
    "torch.float8_e4m3fnuz": dtypes.FP8E4M3FNUZ,
    "torch.float8_e5m2fnuz": dtypes.FP8E5M2FNUZ,
}
_NUMPY = {
    "float32": dtypes.FP32,
    "float16": dtypes.FP16,
    "bfloat16": dtypes.BF16,
    "float64": dtypes.FP64,
    "int8": dtypes.INT8,
    "uint8": dtypes.UINT8,
    "int16": dtypes.INT16,
    "uint16": dtypes.UINT16,
    "int32": dtypes.INT32,
    "uint32": dtypes.UINT32,
    "int64": dtypes.INT64,
    "uint64": dtypes.UINT64,
    "bool": dtypes.BOOL,
    "float8_e4m3fn": dtypes.FP8E4M3FN,
    "float8_e5m2": dtypes.FP8E5M2,
    "float8_e4m3fnuz": dtypes.FP8E4M3FNUZ,
    "float8_e5m2fnuz": dtypes.FP8E5M2FNUZ,
}


def is_torch(x: Any) -> bool:
    """True for a torch tensor (without importing torch when the caller never did)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_tensor(x: Any) -> bool:
    """True for a torch tensor or a NumPy array."""
    return is_torch(x) or isinstance(x, np.ndarray)


def element_type(value: Any) -> DType:
    """The engine dtype of a tensor's elements."""
    key = str(value.dtype)
    found = (_TORCH if is_torch(value) else _NUMPY).get(key)
    if found is None:
        raise LaunchError(f"tensors of dtype {key} are not supported")
    return found


@dataclass(repr=False, eq=False)
class HostMemory:
    """The address table of one launch, plus what must happen to host tensors when it ends."""

    table: AddressTable
    copy_backs: list[Callable[[], None]] = field(default_factory=list)
    arguments: list[ArgumentInfo] = field(default_factory=list)

    def tensor(self, name: str, value: Any, index: int, kind: str = "tensor") -> tuple[View, DType]:
        """Register a tensor argument (``kind``: "tensor" or "descriptor" base); its view and dtype."""
        view, elem = register(name, value, self.table, self.copy_backs)
        self._record(index, name, kind, view)
        return view, elem

    def _record(self, index: int, name: str, kind: str, view: View) -> None:
        info = view.info
        size = info.hi - info.lo
        self.arguments.append(
            ArgumentInfo(index, name, kind, info.dtype, info.shape, info.strides, info.address, size,
                         offset=info.address - view.storage.base)  # fmt: skip
        )

    def buffer(self, name: str, value: Any, elem: DType, index: int) -> View:
        """Register a duck-typed buffer argument (see :func:`register_buffer`); its view."""
        view = register_buffer(name, value, elem, self.table, self.copy_backs)
        self._record(index, name, "tensor", view)
        return view

    def registered(self, view: View) -> ArgumentInfo:
        """The argument record of a tensor registered mid-launch (found behind a loaded pointer)."""
        info = view.info
        arg = ArgumentInfo(-1, info.name, "tensor", info.dtype, info.shape, info.strides, info.address,
                           info.hi - info.lo, offset=info.address - view.storage.base)  # fmt: skip
        return arg

    def finish(self) -> None:
        """Copy results back to the user's non-CPU tensors."""
        for copy_back in self.copy_backs:
            copy_back()


def register(name: str, value: Any, memory: AddressTable, copy_backs: list) -> tuple[View, DType]:
    """Register a tensor's storage and view; returns (view, element dtype)."""
    elem = element_type(value)
    size = elem.itemsize
    storage, address = _storage(value, memory, copy_backs)
    if is_torch(value):
        shape, strides = tuple(value.shape), tuple(value.stride())
    else:
        shape = value.shape
        strides = tuple(s // size for s in value.strides)
        if any(s % size for s in value.strides):
            raise LaunchError("array strides are not multiples of the element size")
    info = ViewInfo(name, address, tuple(shape), tuple(strides), size, elem.name)
    writable = bool(value.flags.writeable) if isinstance(value, np.ndarray) else True
    return memory.add_view(info, storage, writable), elem


def _storage(value: Any, memory: AddressTable, copy_backs: list) -> tuple[Storage, int]:
    """The storage of a torch tensor or NumPy array in ``memory``, and the host address of its first
    element (a non-CPU tensor is copied to the host, and back when the launch ends)."""
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
        return memory.storage_for(storage.data_ptr(), nbytes, buf), tensor.data_ptr()
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous:
        raise LaunchError("the NumPy array's base buffer is not contiguous; pass np.ascontiguousarray(x)")
    buf = root.reshape(-1).view(np.uint8)
    return memory.storage_for(root.__array_interface__["data"][0], root.nbytes, buf), _address(value)


def _address(value: Any) -> int:
    """The address of a torch tensor's or NumPy array's first element, where it lives now."""
    return value.data_ptr() if is_torch(value) else value.__array_interface__["data"][0]


def _span(value: Any) -> tuple[int, int]:
    """[start, end) byte addresses of the whole memory behind a torch tensor or NumPy array."""
    if is_torch(value):
        storage = value.untyped_storage()
        return storage.data_ptr(), storage.data_ptr() + storage.nbytes()
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    start = root.__array_interface__["data"][0]
    return start, start + root.nbytes


def register_buffer(name: str, value: Any, elem: DType, memory: AddressTable, copy_backs: list) -> View:
    """Register a buffer object that is not a tensor but has ``data_ptr()`` (and ``dtype``, here
    ``elem``), as libraries pass their own strided-buffer wrappers; returns its view.

    GPU Triton passes ``data_ptr()`` to the kernel as it is. The engine never touches a raw address:
    the memory must belong to a torch tensor or NumPy array, one the object holds as an attribute
    (Triton's ``TensorWrapper.base``) or else any alive in the process. ``shape`` and ``stride()``,
    where the object has them, give the view (in elements of ``elem``); without a shape the view
    runs from ``data_ptr()`` to the end of that memory.
    """
    address = int(value.data_ptr())
    owner = _owner(value, address)
    if owner is None:
        raise LaunchError(
            f"a {type(value).__name__} whose data_ptr() {address:#x} is not inside any torch tensor or "
            "NumPy array it holds or that is alive in the process; tilescope never reads or writes a raw "
            "host pointer: keep the tensor that owns the memory as an attribute of the object, or pass it"
        )
    storage, owner_address = _storage(owner, memory, copy_backs)
    address = owner_address + address - _address(owner)  # the same place in the host copy
    size = elem.itemsize
    shape = getattr(value, "shape", None)
    if shape is None:
        shape = ((storage.base + storage.nbytes - address) // size,)
    shape = tuple(int(n) for n in shape)
    stride = getattr(value, "stride", None)
    if callable(stride):
        strides = tuple(int(s) for s in stride())
    else:
        strides = tuple(int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape)))
    info = ViewInfo(name, address, shape, strides, size, elem.name)
    if info.hi > info.lo and (info.lo < storage.base or info.hi > storage.base + storage.nbytes):
        raise LaunchError(
            f"a {type(value).__name__} of shape {list(shape)} and strides {list(strides)} reaches past the "
            f"memory of the {type(owner).__name__} that holds it ({storage.nbytes} bytes)"
        )
    return memory.add_view(info, storage)


def _owner(value: Any, address: int) -> Any:
    """The torch tensor or NumPy array whose memory holds ``address``: one ``value`` holds as an
    attribute, else any alive in the process (None when there is none)."""
    held = [*getattr(value, "__dict__", {}).values()]
    held += [getattr(value, s, None) for s in getattr(type(value), "__slots__", ())]
    for candidate in (*held, *(obj for _, _, obj in _live())):
        if is_tensor(candidate):
            start, end = _span(candidate)
            if start <= address < end:
                return candidate
    return None


def _live() -> list[tuple[int, int, Any]]:
    """(start, nbytes, object) of every live CPU torch tensor and NumPy array (a scan of the heap)."""
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


class LiveTensors:
    """Finds live torch tensors / NumPy arrays whose memory holds addresses no argument holds.

    Pointer arrays (grouped GEMM) name tensors that are not kernel arguments. Rather than trust a
    raw address, we look for a live Python tensor object whose storage spans it; only such memory
    is ever read or written. The heap is scanned once per launch, on the first unknown address.
    ``on_register(view)`` is told of every tensor registered this way.
    """

    def __init__(self, on_register: Callable[[View], None] | None = None):
        self._found: list[tuple[int, int, Any]] | None = None
        self.on_register = on_register

    def __call__(self, memory: AddressTable, addresses: np.ndarray) -> None:
        if self._found is None:
            self._found = _live()
        known = {st.base for st in memory.storages}
        for base, nbytes, obj in self._found:
            if base in known:
                continue
            if np.any((addresses >= np.uint64(base)) & (addresses < np.uint64(base + nbytes))):
                try:
                    ptr = obj.data_ptr() if is_torch(obj) else base
                    view, _ = register(f"tensor@{ptr:#x}", obj, memory, [])
                    known.add(base)
                except LaunchError:
                    continue
                if self.on_register is not None:
                    self.on_register(view)


def snapshot(value: Any) -> Any:
    """A copy of a tensor argument (for autotuning's ``restore_value``)."""
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
    """Zero a tensor argument (for autotuning's ``reset_to_zero``)."""
    if is_torch(value):
        value.zero_()
    elif isinstance(value, np.ndarray):
        value[...] = 0

"""Block pointers as a library: ``make_block_ptr``, ``advance``, ``load``, ``store`` for ``@triton.jit`` code.

A block pointer is a plain tuple of jit values, so it can be passed to and returned from helper
``@triton.jit`` functions, carried through loops and stored in tuples on every Triton that has
tuples (3.6 on the GPU, 3.9 on the CPU)::

    (base, shape, strides, offsets, ranges)          # masked-pointer lowering
    (base, shape, strides, offsets, ranges, desc)    # tensor-descriptor lowering

``offsets`` are int32 scalars (as ``tl.make_block_ptr`` made them), ``ranges[d]`` is
``tl.arange(0, block_shape[d])``: its static shape carries the block shape through calls and
loops, where a returned ``tl.constexpr`` would lose its constness. ``desc`` is a
``tl.tensor_descriptor`` built once, in ``make_block_ptr``. The lowering is chosen when the kernel
compiles, by the constexpr ``use_descriptor`` (compute it on the host with
:func:`tilescope.compat.descriptor_ok`); the only rule checked here is the static one (rank 1-5, last
block dimension at least 16 bytes): when it fails, the masked-pointer lowering is used.
"""

import triton
import triton.language as tl


@triton.jit
def make_block_ptr(
    base,
    shape,
    strides,
    offsets,
    block_shape: tl.constexpr,
    order: tl.constexpr,
    use_descriptor: tl.constexpr = False,
):
    """Return a block pointer over ``base`` with ``tl.make_block_ptr``'s arguments and meaning.

    ``order`` is accepted for compatibility; like in Triton it is a layout hint with no effect on
    which elements are read. ``use_descriptor`` selects the tensor-descriptor lowering.
    """
    rank: tl.constexpr = len(block_shape)
    tl.static_assert(rank >= 1 and rank <= 5, "tilescope.compat.make_block_ptr: rank must be 1 to 5")
    tl.static_assert(
        len(shape) == rank and len(strides) == rank and len(offsets) == rank and len(order) == rank,
        "tilescope.compat.make_block_ptr: shape, strides, offsets, block_shape and order "
        "must all have the same length",
    )
    offs = ()
    ranges = ()
    for d in tl.static_range(rank):
        offs = offs + (tl.full([], offsets[d], tl.int32),)
        ranges = ranges + (tl.arange(0, block_shape[d]),)
    inner_bytes: tl.constexpr = block_shape[rank - 1] * base.dtype.element_ty.primitive_bitwidth // 8
    if use_descriptor and inner_bytes >= 16:
        desc = tl.make_tensor_descriptor(base, shape, strides, block_shape)
        return (base, shape, strides, offs, ranges, desc)
    else:
        return (base, shape, strides, offs, ranges)


@triton.jit
def advance(ptr, offsets):
    """Return ``ptr`` moved by ``offsets`` (one integer per dimension, negative allowed)."""
    moved = ()
    for d in tl.static_range(len(ptr[3])):
        moved = moved + (ptr[3][d] + offsets[d],)
    if len(ptr) == 6:
        return (ptr[0], ptr[1], ptr[2], moved, ptr[4], ptr[5])
    else:
        return (ptr[0], ptr[1], ptr[2], moved, ptr[4])


@triton.jit
def _index(ptr, d: tl.constexpr):
    """Return the block's indices along dimension ``d``, shaped to broadcast over the block."""
    rank: tl.constexpr = len(ptr[4])
    idx = ptr[3][d] + ptr[4][d]
    for _ in tl.static_range(d):
        idx = tl.expand_dims(idx, 0)
    for _ in tl.static_range(rank - 1 - d):
        idx = tl.expand_dims(idx, len(idx.shape))
    return idx


@triton.jit
def _pointers(ptr):
    """Return the block's element pointers."""
    pointers = ptr[0]
    for d in tl.static_range(len(ptr[4])):
        pointers = pointers + _index(ptr, d).to(tl.int64) * ptr[2][d]
    return pointers


@triton.jit
def _in_bounds(ptr, dims: tl.constexpr):
    """Return the block-shaped mask of elements inside the shape along each dimension in ``dims``."""
    idx = _index(ptr, dims[0])
    mask = (idx >= 0) & (idx < ptr[1][dims[0]])
    for j in tl.static_range(1, len(dims)):
        idx = _index(ptr, dims[j])
        mask = mask & (idx >= 0) & (idx < ptr[1][dims[j]])
    zeros = _index(ptr, 0) * 0
    for d in tl.static_range(1, len(ptr[4])):
        zeros = zeros + _index(ptr, d) * 0
    return mask & (zeros == 0)  # broadcast to the full block


@triton.jit
def _in_bounds_everywhere(ptr):
    """Return the block-shaped mask of elements inside the shape along every dimension."""
    idx = _index(ptr, 0)
    mask = (idx >= 0) & (idx < ptr[1][0])
    for d in tl.static_range(1, len(ptr[4])):
        idx = _index(ptr, d)
        mask = mask & (idx >= 0) & (idx < ptr[1][d])
    return mask


@triton.jit
def load(ptr, boundary_check: tl.constexpr = None, padding_option: tl.constexpr = None):
    """Return the block at ``ptr``; elements outside the checked dimensions read as the padding.

    ``padding_option`` is None, ``""`` or ``"zero"`` (zeros) or ``"nan"``. The descriptor lowering
    checks every dimension, whatever ``boundary_check`` says. (The default is None, not ``""``:
    Triton 3.6 fails to compile a jit function whose string default is used.)
    """
    tl.static_assert(
        padding_option is None or padding_option == "" or padding_option == "zero" or padding_option == "nan",
        "tilescope.compat.load: padding_option must be '', 'zero' or 'nan'",
    )
    if len(ptr) == 6:
        block = ptr[5].load(ptr[3])
        if padding_option == "nan":
            block = tl.where(_in_bounds_everywhere(ptr), block, float("nan"))
        return block
    elif boundary_check is None:
        return tl.load(_pointers(ptr))
    elif len(boundary_check) == 0:
        return tl.load(_pointers(ptr))
    elif padding_option == "nan":
        return tl.load(_pointers(ptr), mask=_in_bounds(ptr, boundary_check), other=float("nan"))
    else:
        return tl.load(_pointers(ptr), mask=_in_bounds(ptr, boundary_check), other=0)


@triton.jit
def store(ptr, value, boundary_check: tl.constexpr = None):
    """Store ``value`` (cast to the element type) at ``ptr``, skipping out-of-bounds elements."""
    if len(ptr) == 6:
        ptr[5].store(ptr[3], value.to(ptr[0].dtype.element_ty))
    elif boundary_check is None:
        tl.store(_pointers(ptr), value)
    elif len(boundary_check) == 0:
        tl.store(_pointers(ptr), value)
    else:
        tl.store(_pointers(ptr), value, mask=_in_bounds(ptr, boundary_check))

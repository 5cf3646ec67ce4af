"""Block pointers (``make_block_ptr``, ``advance``, ``load``, ``store``) for Triton versions without them.

Use the jit functions inside ``@triton.jit`` code exactly where ``tl.make_block_ptr`` and friends
were; choose the lowering with the constexpr ``use_descriptor`` of :func:`make_block_ptr`, computed on
the host with :func:`descriptor_ok`. See docs/compat.md.
"""

from tilescope.compat.blockptr import advance, load, make_block_ptr, store
from tilescope.compat.rules import descriptor_ok, descriptor_violations

__all__ = ["advance", "descriptor_ok", "descriptor_violations", "load", "make_block_ptr", "store"]

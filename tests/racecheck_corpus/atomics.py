"""Atomics of every op against plain accesses of another program (a race), and against atomics (none)."""

import numpy as np
import torch
import triton
import triton.language as tl

from . import RAW, WAR, WAW, RaceCase, race

OPS = ("add", "max", "min", "and", "or", "xor", "xchg", "cas")


@triton.jit
def update_then_read(x_ptr, v_ptr, cmp_ptr, out_ptr, BLOCK: tl.constexpr, OP: tl.constexpr,
                     READER: tl.constexpr):
    # program 0 updates x with one atomic op; program 1 reads x plainly, overwrites it, or reads it with an
    # atomic that changes nothing
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == 0:
        v = tl.load(v_ptr + offs)
        p = x_ptr + offs
        if OP == "add":
            tl.atomic_add(p, v)  # race: update
        elif OP == "max":
            tl.atomic_max(p, v)  # race: update
        elif OP == "min":
            tl.atomic_min(p, v)  # race: update
        elif OP == "and":
            tl.atomic_and(p, v)  # race: update
        elif OP == "or":
            tl.atomic_or(p, v)  # race: update
        elif OP == "xor":
            tl.atomic_xor(p, v)  # race: update
        elif OP == "xchg":
            tl.atomic_xchg(p, v)  # race: update
        else:
            tl.atomic_cas(p, tl.load(cmp_ptr + offs), v)  # race: update
    else:
        if READER == "load":
            seen = tl.load(x_ptr + offs)  # race: plain
        elif READER == "store":
            seen = tl.zeros((BLOCK,), tl.int32)
            tl.store(x_ptr + offs, tl.load(v_ptr + offs))  # race: plain
        else:
            seen = tl.atomic_or(x_ptr + offs, 0, sem="relaxed")
        tl.store(out_ptr + offs, seen)


_NUMPY = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor, "xchg": lambda x, v: v, "cas": lambda x, v: v}


def _update(op, reader):
    def make(rng):
        x = torch.from_numpy(rng.integers(1, 1000, 16).astype(np.int32))
        v = torch.from_numpy(rng.integers(1, 1000, 16).astype(np.int32))
        out = torch.zeros(16, dtype=torch.int32)
        return [x, v, x.clone(), out], {"BLOCK": 16, "OP": op, "READER": reader}
    return make


def _check_update(op):
    def check(before, args):
        x, v = before[0].numpy().astype(np.int64), before[1].numpy().astype(np.int64)
        new = _NUMPY[op](x, v)
        np.testing.assert_array_equal(args[0].numpy(), new)
        seen = args[3].numpy()  # program 1 saw x before or after program 0's update
        assert np.all((seen == x) | (seen == new))
    return check


@triton.jit
def bump_counters(counts_ptr, BINS: tl.constexpr, RELAXED_READ: tl.constexpr):
    # every program counts into every bin; the last bin is also read back plainly by program 0
    pid = tl.program_id(0)
    bins = tl.arange(0, BINS)
    tl.atomic_add(counts_ptr + bins, pid + 1, sem="relaxed")  # race: count
    if RELAXED_READ and pid == 0:
        tl.store(counts_ptr + BINS, tl.load(counts_ptr + BINS - 1))  # race: peek


def _counters(relaxed_read):
    def make(rng):
        return [torch.zeros(9, dtype=torch.int32)], {"BINS": 8, "RELAXED_READ": relaxed_read}
    return make


def _check_counters(before, args):
    np.testing.assert_array_equal(args[0].numpy()[:8], np.full(8, sum(range(1, 7))))


CASES = [
    *(RaceCase(f"atomic_{op}_vs_plain_load", update_then_read, _update(op, "load"), (2,),
               (race("update", "plain", kinds=(RAW,)),)) for op in OPS),
    *(RaceCase(f"atomic_{op}_vs_plain_store", update_then_read, _update(op, "store"), (2,),
               (race("update", "plain", kinds=(WAW,)),)) for op in OPS[:4]),
    *(RaceCase(f"atomic_{op}_vs_atomic", update_then_read, _update(op, "atomic"), (2,),
               check=_check_update(op)) for op in OPS),
    RaceCase("relaxed_counters", bump_counters, _counters(False), (6,), check=_check_counters),
    RaceCase("relaxed_counters_peeked", bump_counters, _counters(True), (6,),
             (race("count", "peek", kinds=(WAR,)),)),
]

"""Programs that wait on each other: detected in batched mode and run interleaved, never hanging."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import tilescope


@triton.jit
def producer_consumer(flag_ptr, data_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == tl.num_programs(0) - 1:  # the last program produces what every other one waits for
        tl.store(data_ptr + offs, offs.to(tl.float32) * 2.0)
        tl.atomic_xchg(flag_ptr, 1)
    else:
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
        tl.store(out_ptr + pid * BLOCK + offs, tl.load(data_ptr + offs) + pid)


def test_consumer_waiting_for_a_later_program_completes():
    flag = torch.zeros(1, dtype=torch.int32)
    data = torch.zeros(16)
    out = torch.full((8, 16), float("nan"))
    tilescope.trace(producer_consumer)[(9,)](flag, data, out, BLOCK=16)
    want = torch.arange(16).float()[None] * 2 + torch.arange(8).float()[:, None]
    assert torch.equal(out, want)


@triton.jit
def ticket_order(counter_ptr, order_ptr):
    pid = tl.program_id(0)
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(order_ptr + ticket, pid)
    # wait until every program took a ticket, so all of them are in flight together
    while tl.atomic_add(counter_ptr, 0) < tl.num_programs(0):
        pass


def _order(seed):
    counter = torch.zeros(1, dtype=torch.int32)
    order = torch.full((6,), -1, dtype=torch.int32)
    tilescope.trace(ticket_order, seed=seed)[(6,)](counter, order)
    return order.tolist()


def test_schedule_is_seeded_and_reproducible():
    first = _order(3)
    assert sorted(first) == list(range(6))
    assert _order(3) == first


@triton.jit
def wait_forever(flag_ptr):
    while tl.atomic_add(flag_ptr, 0) == 0:
        pass


def test_deadlock_is_reported_not_hung():
    flag = torch.zeros(1, dtype=torch.int32)
    with pytest.raises(tilescope.KernelError, match="deadlock"):
        tilescope.trace(wait_forever)[(4,)](flag)
    assert flag.item() == 0

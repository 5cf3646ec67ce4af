"""Kernels that synchronise programs: flag publication in every sem and scope, relays across three
programs, locks, and the last-block reduction."""

import itertools

import numpy as np
import torch
import triton
import triton.language as tl

from . import RAW, WAR, RaceCase, race, rand

SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "gpu", "sys")


@triton.jit
def publish_scaled(x_ptr, data_ptr, flag_ptr, out_ptr, alpha, BLOCK: tl.constexpr, PUBLISH: tl.constexpr,
                   WAIT: tl.constexpr, PUB_SEM: tl.constexpr, PUB_SCOPE: tl.constexpr,
                   WAIT_SEM: tl.constexpr, WAIT_SCOPE: tl.constexpr):
    # program 0 produces a block and raises a flag; every other program waits for it, then consumes it
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == 0:
        tl.store(data_ptr + offs, tl.load(x_ptr + offs) * alpha)  # race: produce
        if PUBLISH == "store":
            tl.atomic_store(flag_ptr, 1, sem=PUB_SEM, scope=PUB_SCOPE)
        else:
            tl.atomic_xchg(flag_ptr, 1, sem=PUB_SEM, scope=PUB_SCOPE)
    else:
        if WAIT == "load":
            while tl.atomic_load(flag_ptr, sem=WAIT_SEM, scope=WAIT_SCOPE) == 0:
                pass
        elif WAIT == "poll":
            tl.atomic_poll(flag_ptr, 1, sem=WAIT_SEM, scope=WAIT_SCOPE)
        else:
            while tl.atomic_cas(flag_ptr, 1, 1, sem=WAIT_SEM, scope=WAIT_SCOPE) == 0:
                pass
        data = tl.load(data_ptr + offs)  # race: consume
        tl.store(out_ptr + (pid - 1) * BLOCK + offs, data + pid)


def _publish(publish, pub_sem, pub_scope, wait, wait_sem, wait_scope):
    def make(rng):
        flag = torch.zeros(1, dtype=torch.int32)
        return [rand(rng, 32), torch.zeros(32), flag, torch.zeros(3 * 32), 2.0], {
            "BLOCK": 32, "PUBLISH": publish, "WAIT": wait, "PUB_SEM": pub_sem, "PUB_SCOPE": pub_scope,
            "WAIT_SEM": wait_sem, "WAIT_SCOPE": wait_scope}
    return make


def _check_publish(before, args):
    x, out = before[0].double().numpy(), args[3].numpy().reshape(3, 32)
    np.testing.assert_allclose(out, x[None, :] * 2.0 + np.arange(1, 4)[:, None], rtol=1e-6)
    assert args[2].item() == 1


def _orders(sem: str, scope: str, side: str) -> bool:
    wanted = ("release", "acq_rel") if side == "publish" else ("acquire", "acq_rel")
    return sem in wanted and scope in ("gpu", "sys")


def _publish_case(publish, pub_sem, pub_scope, wait, wait_sem, wait_scope) -> RaceCase:
    name = f"flag_{publish}_{pub_sem}_{pub_scope}_{wait}_{wait_sem}_{wait_scope}"
    make = _publish(publish, pub_sem, pub_scope, wait, wait_sem, wait_scope)
    if _orders(pub_sem, pub_scope, "publish") and _orders(wait_sem, wait_scope, "wait"):
        return RaceCase(name, publish_scaled, make, (4,), check=_check_publish)
    return RaceCase(name, publish_scaled, make, (4,), (race("produce", "consume", kinds=(RAW,)),))


_FLAG_CASES = [
    # every pair of semantics, at gpu scope: an xchg publishes, a cas spin waits
    *(_publish_case("xchg", p, "gpu", "cas", w, "gpu") for p, w in itertools.product(SEMS, SEMS)),
    # every pair of scopes with release/acquire (gpu/gpu is above)
    *(_publish_case("xchg", "release", p, "cas", "acquire", w)
      for p, w in itertools.product(SCOPES, SCOPES) if (p, w) != ("gpu", "gpu")),
    # the dedicated atomic_store / atomic_load / atomic_poll
    _publish_case("store", "release", "gpu", "load", "acquire", "gpu"),
    _publish_case("store", "relaxed", "gpu", "load", "acquire", "gpu"),
    _publish_case("store", "release", "sys", "load", "relaxed", "sys"),
    _publish_case("store", "release", "gpu", "poll", "acquire", "gpu"),
    _publish_case("store", "release", "gpu", "poll", "relaxed", "gpu"),
]


@triton.jit
def relay(x_ptr, data_ptr, flags_ptr, out_ptr, BLOCK: tl.constexpr, HOP_WAIT: tl.constexpr,
          HOP_PUBLISH: tl.constexpr):
    # program 0 produces, program 1 passes the baton on, program 2 consumes
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    if pid == 0:
        tl.store(data_ptr + offs, tl.exp(tl.load(x_ptr + offs)))  # race: produce
        tl.atomic_xchg(flags_ptr, 1, sem="release")
    elif pid == 1:
        while tl.atomic_load(flags_ptr, sem=HOP_WAIT) == 0:
            pass
        tl.atomic_xchg(flags_ptr + 1, 1, sem=HOP_PUBLISH)
    else:
        while tl.atomic_load(flags_ptr + 1, sem="acquire") == 0:
            pass
        tl.store(out_ptr + offs, tl.load(data_ptr + offs) * 0.5)  # race: consume


def _relay(hop_wait, hop_publish):
    def make(rng):
        return [rand(rng, 16), torch.zeros(16), torch.zeros(2, dtype=torch.int32), torch.zeros(16)], {
            "BLOCK": 16, "HOP_WAIT": hop_wait, "HOP_PUBLISH": hop_publish}
    return make


def _check_relay(before, args):
    np.testing.assert_allclose(args[3].numpy(), np.exp(before[0].double().numpy()) * 0.5, rtol=1e-6)


@triton.jit
def locked_sum(x_ptr, total_ptr, lock_ptr, n, BLOCK: tl.constexpr, LOCK_SEM: tl.constexpr,
               UNLOCK_SEM: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    while tl.atomic_cas(lock_ptr, 0, 1, sem=LOCK_SEM) == 1:
        pass
    total = tl.load(total_ptr)  # race: read
    tl.store(total_ptr, total + part)  # race: write
    tl.atomic_xchg(lock_ptr, 0, sem=UNLOCK_SEM)


def _locked(lock_sem, unlock_sem):
    def make(rng):
        return [rand(rng, 200), torch.zeros(1), torch.zeros(1, dtype=torch.int32), 200], {
            "BLOCK": 64, "LOCK_SEM": lock_sem, "UNLOCK_SEM": unlock_sem}
    return make


def _check_locked(before, args):
    np.testing.assert_allclose(args[1].item(), before[0].double().numpy().sum(), rtol=1e-5)


@triton.jit
def sum_last_block(x_ptr, partial_ptr, count_ptr, out_ptr, n, BLOCK: tl.constexpr, NUM_BLOCKS: tl.constexpr,
                   SEM: tl.constexpr):
    # threadfence reduction: the program that takes the last ticket adds up every partial
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))  # race: partial
    ticket = tl.atomic_add(count_ptr, 1, sem=SEM)
    if ticket == NUM_BLOCKS - 1:
        tl.store(out_ptr, tl.sum(tl.load(partial_ptr + tl.arange(0, NUM_BLOCKS))))  # race: total


def _last_block(sem):
    def make(rng):
        return [rand(rng, 500), torch.zeros(8), torch.zeros(1, dtype=torch.int32), torch.zeros(1), 500], {
            "BLOCK": 64, "NUM_BLOCKS": 8, "SEM": sem}
    return make


def _check_last_block(before, args):
    np.testing.assert_allclose(args[3].item(), before[0].double().numpy().sum(), rtol=1e-5)


CASES = [
    *_FLAG_CASES,
    RaceCase("relay_three_programs", relay, _relay("acquire", "release"), (3,), check=_check_relay),
    RaceCase("relay_hop_drops_acquire", relay, _relay("relaxed", "release"), (3,),
             (race("produce", "consume", kinds=(RAW,)),)),
    RaceCase("relay_hop_drops_release", relay, _relay("acquire", "relaxed"), (3,),
             (race("produce", "consume", kinds=(RAW,)),)),
    RaceCase("locked_sum", locked_sum, _locked("acquire", "release"), (4,), check=_check_locked),
    RaceCase("locked_sum_relaxed_unlock", locked_sum, _locked("acquire", "relaxed"), (4,),
             (race("read", "write", kinds=(RAW, WAR)), race("write", kinds=("write-after-write",)))),
    RaceCase("sum_last_block", sum_last_block, _last_block("acq_rel"), (8,), check=_check_last_block),
    RaceCase("sum_last_block_relaxed_ticket", sum_last_block, _last_block("relaxed"), (8,),
             (race("partial", "total", kinds=(RAW,)),)),
]

"""Helion kernels with out-of-bounds bugs; the faulty line ends in ``# BUG <tag>``."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[128]))
def shifted_add_one(x: torch.Tensor) -> torch.Tensor:
    """out[i] = x[i + 1] + 1: the last element reads one past the end."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile + 1] + 1  # BUG load
    return out


@helion.kernel(config=helion.Config(block_sizes=[32]))
def row_sums_short_output(x: torch.Tensor) -> torch.Tensor:
    """An output one row short: the last row's sum is written past its end."""
    m, _n = x.size()
    out = torch.empty([m - 1], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].sum(-1)  # BUG store
    return out


@helion.kernel(config=helion.Config(block_sizes=[16]))
def embedding(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """out[r] = table[ids[r]]; an id past the table's rows reads outside it."""
    n = ids.size(0)
    dim = table.size(1)
    out = torch.empty([n, dim], dtype=table.dtype, device=table.device)
    for tile in hl.tile(n):
        out[tile, :] = table[ids[tile], :]  # BUG gather
    return out


@helion.kernel(config=helion.Config(block_sizes=[32]))
def column_sums_racy(x: torch.Tensor) -> torch.Tensor:
    """Column sums where every row tile writes the whole output (the programs race)."""
    m, n = x.size()
    out = torch.zeros([n], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[:] = x[tile_m, :].sum(0)  # BUG race
    return out


@helion.kernel(config=helion.Config(block_sizes=[64]))
def shift_left_in_place(x: torch.Tensor) -> torch.Tensor:
    """x[i] = x[i + 1] in place: a tile reads the first element of the next tile, which that tile
    overwrites."""
    for tile in hl.tile(x.size(0) - 1):
        x[tile] = x[tile + 1]  # BUG race
    return x

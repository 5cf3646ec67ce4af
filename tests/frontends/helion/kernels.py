"""Helion kernels written the way Helion's examples write them (``@helion.kernel``, ``hl.tile``).

Each kernel is declared with one config so that no autotuning runs.
"""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[256]))
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x + y, elementwise."""
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):
        out[tile] = x[tile] + y[tile]
    return out


@helion.kernel(config=helion.Config(block_sizes=[16]))
def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax, whole rows per tile."""
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :], dim=1)
    return out


@helion.kernel(config=helion.Config(block_sizes=[32, 32, 32]))
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x @ y with an fp32 accumulator over K tiles."""
    m, k = x.size()
    _k, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(config=helion.Config(block_sizes=[16]))
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) * weight, row by row."""
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        inv_rms = torch.rsqrt(torch.mean(row * row, dim=-1, keepdim=True) + eps)
        out[tile_m, :] = (row * inv_rms * weight[:].to(torch.float32)).to(out.dtype)
    return out


@helion.kernel(config=helion.Config(block_sizes=[16]))
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias, row by row."""
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m in hl.tile(m):
        row = x[tile_m, :].to(torch.float32)
        mean = torch.mean(row, dim=-1, keepdim=True)
        centered = row - mean
        var = torch.mean(centered * centered, dim=-1, keepdim=True)
        out[tile_m, :] = (centered * torch.rsqrt(var + eps) * weight[:] + bias[:]).to(out.dtype)
    return out


@helion.kernel(config=helion.Config(block_sizes=[32]))
def row_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of each row."""
    m, _n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].sum(-1)
    return out


@helion.kernel(config=helion.Config(block_sizes=[128]))
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """The tanh approximation of GELU."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        v = x[tile]
        out[tile] = 0.5 * v * (1.0 + torch.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
    return out


@helion.kernel(config=helion.Config(block_sizes=[8, 32]))
def transpose_scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    """alpha * x.T in 2-D tiles."""
    m, n = x.size()
    out = torch.empty([n, m], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_n, tile_m] = (x[tile_m, tile_n] * alpha).T
    return out

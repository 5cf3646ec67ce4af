"""TileLang kernels with out-of-bounds bugs (marked ``# BUG <tag>``) that TileLang compiles without
complaint: accesses outside ``T.Parallel`` loops and tile operations are not guarded, and nothing
guards shared or fragment buffers."""

import tilelang.language as T


def block_sums_floor_grid(N, block_N=128, dtype="float32"):
    """Per-block partial sums, the partials buffer sized ``N // block_N`` while the grid rounds up:
    the last (partial) block stores its sum past the end."""

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Partial: T.Tensor((N // block_N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            tile = T.alloc_fragment((block_N,), dtype)
            total = T.alloc_fragment((1,), dtype)
            T.copy(X[bx * block_N], tile)
            T.reduce_sum(tile, total, dim=0)
            Partial[bx] = total[0]  # BUG store

    return main


def rows_with_stats(N, D, blk_m=4, dtype="float32"):
    """Rows normalised by saved statistics, as in a layer-norm backward: each block walks ``blk_m``
    rows with a serial loop and reads ``Mean[row]`` unguarded, so a last block past ``N`` reads past
    the statistics when ``N`` is not a multiple of ``blk_m``."""

    @T.prim_func
    def main(X: T.Tensor((N, D), dtype), Mean: T.Tensor((N,), dtype), Y: T.Tensor((N, D), dtype)):
        with T.Kernel(T.ceildiv(N, blk_m), threads=128) as bx:
            x = T.alloc_shared((1, D), dtype)
            for k in T.serial(blk_m):
                row = bx * blk_m + k
                T.copy(X[row, 0], x)
                m = Mean[row]  # BUG load
                for i, j in T.Parallel(1, D):
                    x[i, j] = x[i, j] - m
                T.copy(x, Y[row, 0])

    return main


def smooth_without_halo(N, block_N=64, dtype="float32"):
    """A 2-point smoothing stencil whose shared tile forgot the halo element: the last lane reads one
    past the end of the shared buffer."""

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            x_shared = T.alloc_shared((block_N,), dtype)
            y_local = T.alloc_fragment((block_N,), dtype)
            T.copy(X[bx * block_N], x_shared)
            for i in T.Parallel(block_N):
                y_local[i] = (x_shared[i] + x_shared[i + 1]) * 0.5  # BUG shared
            T.copy(y_local, Y[bx * block_N])

    return main


def block_maxima_element_index(N, block_N=128, dtype="float32"):
    """Each block's maximum folded into its output with an atomic, indexed by the block's first
    element instead of the block: every block but the first writes past the ``ceildiv(N, block_N)``
    outputs."""

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Out: T.Tensor((T.ceildiv(N, block_N),), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            tile = T.alloc_fragment((block_N,), dtype)
            top = T.alloc_fragment((1,), dtype)
            T.copy(X[bx * block_N], tile)
            T.reduce_max(tile, top, dim=0)
            T.atomic_max(Out[bx * block_N], top[0])  # BUG atomic

    return main
